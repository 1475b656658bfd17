import Foundation
import TestSupport
import XCTest

/// A mirror between the stand-in's private bus and plain HTTP clients, for the tests of `cyclelog-mirror`.
extension XCTestCase {
    func startMirror(
        bus: PrivateBus, listen: String, stateDirectory: String? = nil, extra: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> (Cyclelog, Int) {
        let state = stateDirectory ?? bus.folder.appendingPathComponent("state").path
        let mirror = try Cyclelog(
            ["--listen", listen, "--state-dir", state] + extra, bus: bus, environment: environment,
            binary: "cyclelog-mirror")
        var port: Int?
        try await waitFor("the mirror serving", mirror) {
            guard let line = mirror.output.split(separator: "\n").first(where: { $0.contains("serving http") })
            else { return false }
            let address = line.split(separator: " ").first { $0.hasPrefix("http") } ?? ""
            port = Int(address.split(separator: ":").last ?? "")
            return port != nil
        }
        return (mirror, try XCTUnwrap(port))
    }

    func runMirror(_ arguments: [String], _ bus: PrivateBus) throws -> String {
        let command = try Cyclelog(arguments, bus: bus, binary: "cyclelog-mirror")
        XCTAssertEqual(command.wait(seconds: 20), 0, "\(arguments): \(command.output)")
        return command.output
    }

    /// A pairing offered for `types` (the command's own default without).
    func pairOffer(_ bus: PrivateBus, types: String? = nil) throws -> (code: String, oneTimeToken: String) {
        let offer = try runMirror(["pair", "--name", "phone", "--json"] + (types.map { ["--types", $0] } ?? []), bus)
            .jsonObject
        let url = try XCTUnwrap(offer["url"] as? String)
        let token = try XCTUnwrap(url.components(separatedBy: "/pair?t=").last)
        return (try XCTUnwrap(offer["code"] as? String), token)
    }

    /// Pairs a phone by its code, as the page does; its token.
    func pairedToken(_ bus: PrivateBus, _ port: Int, types: String? = nil) throws -> String? {
        let offer = try pairOffer(bus, types: types)
        let answer = try pairWithCode(port, offer.code)
        XCTAssertEqual(answer.status, 200, answer.body)
        XCTAssertTrue(answer.headers["set-cookie"]?.hasPrefix("cyclelog=") ?? false)
        return answer.json["token"] as? String
    }

    func pairWithCode(_ port: Int, _ code: String) throws -> HTTPConnection.Answer {
        try HTTPConnection.request(
            port: port, "POST", "/api/v1/pair", headers: ["Content-Type": "application/json"],
            body: #"{"code":"\#(code)","name":"Anna's phone"}"#)
    }

    func get(_ port: Int, _ path: String, token: String?) throws -> HTTPConnection.Answer {
        try HTTPConnection.request(
            port: port, "GET", path, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    /// A browser's POST: the cookie, JSON and (unless `marker` is false) `X-Cyclelog-Request: 1`.
    func post(_ port: Int, _ path: String, token: String, json: String, marker: Bool = true) throws
        -> HTTPConnection.Answer
    {
        var headers = ["Cookie": "cyclelog=\(token)", "Content-Type": "application/json"]
        if marker { headers["X-Cyclelog-Request"] = "1" }
        return try HTTPConnection.request(port: port, "POST", path, headers: headers, body: json)
    }

    func openStream(_ port: Int, token: String, lastEventID: String? = nil, query: String = "") throws
        -> HTTPConnection
    {
        let connection = try HTTPConnection(port: port)
        var headers = ["Authorization": "Bearer \(token)", "Accept": "text/event-stream"]
        if let lastEventID { headers["Last-Event-ID"] = lastEventID }
        try connection.send("GET", "/api/v1/stream" + query, host: "127.0.0.1:\(port)", headers: headers)
        let head = try connection.readHead(seconds: 5)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-type"], "text/event-stream")
        return connection
    }

    /// The next message of a kind, skipping the others (`live`, `status`, keep-alives).
    func nextEvent(_ stream: HTTPConnection, _ kind: String) -> (
        id: String?, event: String?, data: String, comment: Bool
    )? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, let message = stream.nextEvent(seconds: 10) {
            if message.event == kind { return message }
        }
        return nil
    }
}
