"""Oracle for BeaconBridge's private address resolution: bluetooth-data-tools decides.

Input lines: KEY_HEX ADDRESS (the key's 16 bytes as written, most significant first).
Output lines: ADDRESS AS_WRITTEN REVERSED, each 1 when bluetooth-data-tools resolves the address with the key
in that byte order, else 0.
"""

import sys

from bluetooth_data_tools import get_cipher_for_irk, resolve_private_address


def main(source: str, target: str) -> None:
    with open(source, encoding="ascii") as lines, open(target, "w", encoding="ascii") as out:
        for line in lines:
            key_hex, address = line.split()
            key = bytes.fromhex(key_hex)
            written = resolve_private_address(get_cipher_for_irk(key), address)
            reversed_ = resolve_private_address(get_cipher_for_irk(key[::-1]), address)
            out.write(f"{address} {int(written)} {int(reversed_)}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
