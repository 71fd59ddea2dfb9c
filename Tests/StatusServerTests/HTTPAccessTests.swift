import Testing

@testable import StatusServer

@Suite struct HTTPAccessTests {
    static func request(_ method: String = "GET", authorization: String? = nil) -> HTTPRequest {
        HTTPRequest(method: method, path: "/", headers: authorization.map { ["authorization": $0] } ?? [:])
    }

    @Test func withoutTokensAnyoneReadsAndNobodyActs() {
        let access = HTTPAccess(readToken: nil, actionToken: nil)
        #expect(access.check(Self.request(), needs: .read) == nil)
        #expect(access.check(Self.request("POST", authorization: "Bearer x"), needs: .action)?.status == 403)
    }

    @Test func theReadTokenIsNeededToRead() {
        let access = HTTPAccess(readToken: "r3ad", actionToken: "act")
        #expect(access.check(Self.request(), needs: .read)?.status == 401)
        #expect(access.check(Self.request(authorization: "Bearer wrong"), needs: .read)?.status == 401)
        #expect(access.check(Self.request(authorization: "Bearer r3ad"), needs: .read) == nil)
        #expect(access.check(Self.request(authorization: "bearer r3ad"), needs: .read) == nil)
        // user:r3ad in base64: what a browser sends after asking for the password.
        #expect(access.check(Self.request(authorization: "Basic dXNlcjpyM2Fk"), needs: .read) == nil)
        #expect(access.check(Self.request(authorization: "Basic !!!"), needs: .read)?.status == 401)
        #expect(access.check(Self.request(authorization: "Bearer act"), needs: .read) == nil)
        #expect(access.check(Self.request(authorization: "Bearer r3ad"), needs: .action)?.status == 401)
        #expect(access.check(Self.request(authorization: "Bearer act"), needs: .action) == nil)
        #expect(access.check(Self.request(authorization: "Bearer r3a"), needs: .read)?.status == 401)
        #expect(access.check(Self.request(authorization: "Bearer r3adx"), needs: .read)?.status == 401)
    }
}
