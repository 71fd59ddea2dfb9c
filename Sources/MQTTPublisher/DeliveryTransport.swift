import BeaconCore

/// What the publisher needs from a connection to a broker (docs/architecture.md, "Delivery"). `MQTTClient`
/// (libmosquitto) is one implementation; tests use a fake. The transport connects and reconnects by itself
/// and reports through the `onEvent` handler it was created with: `.connected`, `.disconnected`,
/// `.acknowledged` / `.refused` with the message id `publish` returned (possibly before `publish` has
/// returned), `.message` for subscribed topics, `.stopped`. Message ids are unique for the transport's
/// lifetime, not per connection: the publisher may still hold ids of a connection that broke (it learns of
/// the break later, through its input queue) while it sends on the next. Subscriptions are not remembered
/// across reconnects: the publisher subscribes again after every `.connected`.
public protocol DeliveryTransport: AnyObject, Sendable {
    /// Starts connecting (and reconnecting until `stop()`).
    func start()
    /// Sends what is queued, disconnects cleanly (bounded) and ends; returns once `.stopped` was reported.
    func stop() async
    /// Queues a message; returns its message id, or why it was not taken (`isPermanentPublishRefusal`: never).
    func publish(topic: String, payload: String, qos: UInt8, retain: Bool) -> Result<Int32, MQTTError>
    /// Hands everything published since the last call to the network side at once (for libmosquitto: one
    /// wake-up of the network thread per batch instead of one per message). The publisher calls it after
    /// every input it handled.
    func flush()
    /// Subscribes to a topic filter on the current connection.
    @discardableResult
    func subscribe(_ filter: String, qos: UInt8) -> MQTTError?
}

extension MQTTClient: DeliveryTransport {}

/// Creates the publisher's transport for these options, reporting to the handler.
public typealias DeliveryTransportFactory =
    @Sendable (MQTTClientOptions, @escaping @Sendable (MQTTClientEvent) -> Void) throws(MQTTError) ->
    any DeliveryTransport
