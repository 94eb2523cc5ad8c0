import Testing

@testable import Control

private func parse(_ line: String) -> Result<ControlRequest, ControlRequest.Rejection> {
    ControlRequest.parse(line: ArraySlice(line.utf8), peer: ControlPeer(pid: 1, uid: 2, gid: 3))
}

private func request(_ line: String) throws -> ControlRequest {
    try parse(line).get()
}

@Suite(.timeLimit(.minutes(10))) struct ControlRequestTests {
    @Test func commandIdAndArgumentsAreSeparated() throws {
        let parsed = try request(#"{"id":3,"command":"runs.list","limit":20,"offset":0}"#)
        #expect(parsed.id == 3)
        #expect(parsed.command == "runs.list")
        #expect(parsed.arguments == ["limit": 20, "offset": 0])
        #expect(parsed.peer == ControlPeer(pid: 1, uid: 2, gid: 3))
    }

    @Test func idMayBeANumberAStringOrAbsent() throws {
        #expect(try request(#"{"id":"abc","command":"status"}"#).id == "abc")
        #expect(try request(#"{"id":1.5,"command":"status"}"#).id == 1.5)
        #expect(try request(#"{"command":"status"}"#).id == .null)
        #expect(try request(#"{"id":null,"command":"status"}"#).id == .null)
    }

    static let rejected: [(line: String, id: JSONValue, message: String)] = [
        ("{not json", .null, "invalid JSON at offset 1"),
        ("[1,2]", .null, "must be a JSON object, not an array"),
        (#""status""#, .null, "must be a JSON object, not a string"),
        (#"{"id":4}"#, 4, "missing \"command\""),
        (#"{"id":"q","command":12}"#, "q", "\"command\" must be a non-empty string, not a number"),
        (#"{"id":5,"command":""}"#, 5, "non-empty string"),
        (#"{"id":{"a":1},"command":"status"}"#, .null, "\"id\" must be a number, a string or null, not an object"),
    ]

    @Test(arguments: rejected)
    func invalidRequestsAreRejectedWithTheirId(_ line: String, id: JSONValue, message: String) throws {
        guard case .failure(let rejection) = parse(line) else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(rejection.id == id)
        #expect(rejection.error.code == .badRequest)
        #expect(rejection.error.message.contains(message), "\(rejection.error.message)")
    }

    @Test func integerArguments() throws {
        let parsed = try request(#"{"command":"runs.show","run":12,"half":1.5,"text":"12","none":null,"big":500}"#)
        #expect(try parsed.int("run") == 12)
        #expect(try parsed.optionalInt("absent") == nil)
        #expect(try parsed.int("absent", default: 7) == 7)
        #expect(try parsed.int("none", default: 7) == 7)
        #expect(throws: ControlError.badRequest("runs.show: missing argument \"absent\" (an integer)")) {
            try parsed.int("absent")
        }
        #expect(throws: ControlError.badRequest("runs.show: argument \"text\" must be an integer, got a string (\"12\")")) {
            try parsed.int("text")
        }
        #expect(throws: ControlError.badRequest("runs.show: argument \"half\" must be an integer, got a number (1.5)")) {
            try parsed.int("half")
        }
        #expect(throws: ControlError.badRequest("runs.show: argument \"big\" must be between 1 and 100, got 500")) {
            try parsed.int("big", in: 1...100)
        }
    }

    @Test func stringBoolAndNumberArguments() throws {
        let parsed = try request(#"{"command":"runs.export","format":"kml","ok":true,"x":2.5,"n":3}"#)
        #expect(try parsed.string("format") == "kml")
        #expect(throws: ControlError.badRequest("runs.export: argument \"format\" must be one of \"gpx\" or \"tcx\", got \"kml\"")) {
            try parsed.string("format", oneOf: ["gpx", "tcx"])
        }
        #expect(throws: ControlError.badRequest("runs.export: missing argument \"kind\" (one of \"a\", \"b\" or \"c\")")) {
            try parsed.string("kind", oneOf: ["a", "b", "c"])
        }
        #expect(try parsed.string("absent", default: "gpx") == "gpx")
        #expect(throws: ControlError.badRequest("runs.export: argument \"n\" must be a string, got a number (3)")) {
            try parsed.string("n")
        }
        #expect(try parsed.bool("ok"))
        #expect(try parsed.bool("absent", default: false) == false)
        #expect(throws: ControlError.badRequest("runs.export: argument \"format\" must be true or false, got a string (\"kml\")")) {
            try parsed.bool("format")
        }
        #expect(try parsed.double("x") == 2.5)
        #expect(try parsed.double("n") == 3)
        #expect(try parsed.optionalDouble("absent") == nil)
    }

    @Test func replyLinesHaveAFixedShape() {
        #expect(String(decoding: ReplyLine.success(id: 1, result: ["a": 1]), as: UTF8.self) == "{\"id\":1,\"ok\":true,\"result\":{\"a\":1}}\n")
        #expect(String(decoding: ReplyLine.success(id: "x", result: nil), as: UTF8.self) == "{\"id\":\"x\",\"ok\":true}\n")
        #expect(
            String(decoding: ReplyLine.failure(id: nil, error: .unknownCommand("fly")), as: UTF8.self)
                == "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"unknown_command\",\"message\":\"unknown command \\\"fly\\\"\"}}\n")
        #expect(String(decoding: ReplyLine.chunk(id: 5, text: "a\nb"), as: UTF8.self) == "{\"id\":5,\"chunk\":\"a\\nb\"}\n")
    }
}
