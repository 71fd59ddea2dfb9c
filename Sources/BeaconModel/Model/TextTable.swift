/// Plain-text tables for the status commands (`rooms status`, `devices status`): columns padded to their widest
/// cell, two spaces apart, no trailing spaces.
public enum TextTable {
    /// `rows[0]` is the header; every row should have its number of cells (missing cells print empty).
    public static func render(_ rows: [[String]]) -> String {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            var line = (0..<columns).map { column in
                let cell = column < row.count ? row[column] : ""
                return cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
