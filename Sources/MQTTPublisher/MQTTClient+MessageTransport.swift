import BeaconDelivery

/// libmosquitto's client is the MQTT sink's `MessageTransport` (BeaconDelivery/Delivery, sink-neutral).
extension MQTTClient: MessageTransport {}

/// Creates the publisher's transport for these options, reporting to the handler.
public typealias MessageTransportFactory =
    @Sendable (MQTTClientOptions, @escaping @Sendable (TransportEvent) -> Void) throws(MQTTError) ->
    any MessageTransport
