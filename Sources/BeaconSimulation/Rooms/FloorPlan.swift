import BeaconModel

/// A site's floor plan for the multi-gateway simulation: rooms (axis-aligned rectangles, metres), walls
/// (segments, each with its own attenuation; a doorway is a gap between two wall segments) and the gateways
/// placed in the rooms. Ground truth is the room whose rectangle holds the beacon (none: `not_home`).
public struct FloorPlan: Sendable, Equatable {
    public struct Room: Sendable, Equatable {
        public var name: String
        public var minX: Double, minY: Double, maxX: Double, maxY: Double
        public init(name: String, minX: Double, minY: Double, maxX: Double, maxY: Double) {
            self.name = name
            self.minX = min(minX, maxX)
            self.maxX = max(minX, maxX)
            self.minY = min(minY, maxY)
            self.maxY = max(minY, maxY)
        }
        public func contains(x: Double, y: Double) -> Bool { x >= minX && x < maxX && y >= minY && y < maxY }
    }

    public struct Wall: Sendable, Equatable {
        public var x1: Double, y1: Double, x2: Double, y2: Double
        /// dB lost by a signal that crosses the wall (COST 231 multi-wall: light internal wall 3.4 dB, heavy 6.9 dB).
        public var attenuation: Double
        public init(x1: Double, y1: Double, x2: Double, y2: Double, attenuation: Double) {
            self.x1 = x1
            self.y1 = y1
            self.x2 = x2
            self.y2 = y2
            self.attenuation = attenuation
        }
    }

    public struct Gateway: Sendable, Equatable {
        public var id: String
        public var room: String
        public var x: Double, y: Double
        /// How much louder (dB, may be negative) this gateway's receiver reads than the reference receiver:
        /// the simulated hardware difference the arbiter's per-gateway offset calibrates away.
        public var receiverOffset: Double
        public init(id: String, room: String, x: Double, y: Double, receiverOffset: Double = 0) {
            self.id = id
            self.room = room
            self.x = x
            self.y = y
            self.receiverOffset = receiverOffset
        }
    }

    public var rooms: [Room]
    public var walls: [Wall]
    public var gateways: [Gateway]

    public init(rooms: [Room], walls: [Wall], gateways: [Gateway]) {
        self.rooms = rooms
        self.walls = walls
        self.gateways = gateways
    }

    /// The room holding the point (the first listed when rectangles overlap); nil outside every room.
    public func room(x: Double, y: Double) -> String? {
        rooms.first { $0.contains(x: x, y: y) }?.name
    }

    /// Sum of the attenuation of every wall the straight line between the two points crosses.
    public func wallLoss(fromX ax: Double, y ay: Double, toX bx: Double, y by: Double) -> Double {
        var total = 0.0
        for wall in walls where FloorPlan.segmentsCross(ax, ay, bx, by, wall.x1, wall.y1, wall.x2, wall.y2) {
            total += wall.attenuation
        }
        return total
    }

    /// Whether segment a-b and segment c-d intersect (touching counts; collinear overlaps count).
    static func segmentsCross(
        _ ax: Double, _ ay: Double, _ bx: Double, _ by: Double,
        _ cx: Double, _ cy: Double, _ dx: Double, _ dy: Double
    ) -> Bool {
        func orientation(_ px: Double, _ py: Double, _ qx: Double, _ qy: Double, _ rx: Double, _ ry: Double) -> Int {
            let value = (qy - py) * (rx - qx) - (qx - px) * (ry - qy)
            return abs(value) < 1e-12 ? 0 : (value > 0 ? 1 : 2)
        }
        func onSegment(_ px: Double, _ py: Double, _ qx: Double, _ qy: Double, _ rx: Double, _ ry: Double) -> Bool {
            qx <= max(px, rx) && qx >= min(px, rx) && qy <= max(py, ry) && qy >= min(py, ry)
        }
        let o1 = orientation(ax, ay, bx, by, cx, cy)
        let o2 = orientation(ax, ay, bx, by, dx, dy)
        let o3 = orientation(cx, cy, dx, dy, ax, ay)
        let o4 = orientation(cx, cy, dx, dy, bx, by)
        if o1 != o2 && o3 != o4 { return true }
        if o1 == 0 && onSegment(ax, ay, cx, cy, bx, by) { return true }
        if o2 == 0 && onSegment(ax, ay, dx, dy, bx, by) { return true }
        if o3 == 0 && onSegment(cx, cy, ax, ay, dx, dy) { return true }
        if o4 == 0 && onSegment(cx, cy, bx, by, dx, dy) { return true }
        return false
    }
}
