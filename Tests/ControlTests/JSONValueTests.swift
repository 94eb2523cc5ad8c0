import Foundation
import Testing

@testable import Control

/// Foundation's JSONSerialization is an independent parser: both must read the same value.
private func foundationValue(_ text: String) throws -> JSONValue {
    func convert(_ any: Any) -> JSONValue {
        switch any {
        case is NSNull: return .null
        case let number as NSNumber:
            // JSONSerialization makes true/false NSNumbers of type "c" (char); numbers are q or d.
            if String(cString: number.objCType) == "c" { return .bool(number.boolValue) }
            return .number(number.doubleValue)
        case let string as String: return .string(string)
        case let array as [Any]: return .array(array.map(convert))
        case let object as [String: Any]: return .object(object.mapValues(convert))
        default: return .string("unexpected \(type(of: any))")
        }
    }
    return convert(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
}

@Suite(.timeLimit(.minutes(10))) struct JSONValueTests {
    static let documents = [
        #"{"id":1,"command":"status"}"#,
        #"{"id":"a-7","command":"runs.list","limit":20,"offset":0}"#,
        #"  [1, -2.5, 3e2, 1E-3, 0, -0, 12345678901234] "#,
        #"{"nested":{"a":[true,false,null,{"b":[]}],"c":{}},"s":"x\"y\\z\/w"}"#,
        #""\u00e9\u20ac\ud83c\udfc3 \n\t\r\b\f""#,
        #"{"unicode":"Città ✓ 🏃","empty":""}"#,
        "\"line\\u0001control\"",
        "null", "true", "false", "0.1", "-1.7976931348623157e308",
    ]

    @Test(arguments: documents)
    func parsesLikeFoundation(_ text: String) throws {
        #expect(try JSONValue(parsing: text) == foundationValue(text))
    }

    @Test(arguments: documents)
    func serializedTextReadsBackTheSameEverywhere(_ text: String) throws {
        let value = try JSONValue(parsing: text)
        let serialized = value.serialized()
        #expect(!serialized.contains("\n"))
        #expect(try JSONValue(parsing: serialized) == value)
        #expect(try foundationValue(serialized) == value)
    }

    @Test func numbersAreWrittenPlainly() {
        #expect(JSONValue.number(12).serialized() == "12")
        #expect(JSONValue.number(-3).serialized() == "-3")
        #expect(JSONValue.number(5.21).serialized() == "5.21")
        #expect(JSONValue.number(9_007_199_254_740_991).serialized() == "9007199254740991")
        #expect(JSONValue.number(.nan).serialized() == "null")
        #expect(JSONValue.number(.infinity).serialized() == "null")
        #expect(JSONValue.number(1e300).serialized() == "1e+300")
    }

    @Test func objectKeysAreSorted() {
        let value: JSONValue = ["zeta": 1, "alpha": [true, nil], "mid": "x"]
        #expect(value.serialized() == #"{"alpha":[true,null],"mid":"x","zeta":1}"#)
    }

    @Test func stringsAreEscaped() {
        let value = JSONValue.string("a\"b\\c\nd\u{1}e\u{7f}é")
        #expect(value.serialized() == "\"a\\\"b\\\\c\\nd\\u0001e\u{7f}é\"")
    }

    static let invalid: [(text: String, offset: Int, reason: String)] = [
        ("", 0, "unexpected end of input"),
        ("{", 1, "expected a string key"),
        (#"{"a" 1}"#, 5, "expected ':' after the object key \"a\""),
        (#"{"a":1,}"#, 7, "expected a string key"),
        ("[1,]", 3, "expected a value, found ']'"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ("01", 1, "unexpected '1' after the JSON value"),
        ("1.", 2, "expected a digit after '.'"),
        ("-", 1, "invalid number"),
        ("1e999", 0, "number out of range"),
        ("tru", 0, "expected a value, found 't'"),
        ("{} x", 3, "unexpected 'x' after the JSON value"),
        (#""\x""#, 2, "invalid escape"),
        ("\"a\u{1}b\"", 2, "control character 0x1"),
        (#""\ud800""#, 1, "unpaired surrogate"),
        (#""\u12G4""#, 5, "expected 4 hex digits"),
        (#""abc"#, 0, "unterminated string"),
        ("NaN", 0, "expected a value, found 'N'"),
    ]

    @Test(arguments: invalid)
    func invalidTextIsLocatedAndExplained(_ text: String, offset: Int, reason: String) {
        #expect {
            try JSONValue(parsing: text)
        } throws: { error in
            guard let error = error as? JSONParseError else { return false }
            return error.offset == offset && error.reason.contains(reason)
        }
    }

    @Test func invalidUTF8InAStringIsRefused() {
        let bytes: [UInt8] = [UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]
        #expect(throws: JSONParseError(offset: 0, reason: "string is not valid UTF-8")) {
            try JSONValue(parsing: bytes)
        }
    }

    @Test func nestingIsLimitedInsteadOfOverflowingTheStack() throws {
        let depth = JSONValue.maximumNestingDepth
        let allowed = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(try JSONValue(parsing: allowed).arrayValue != nil)
        let tooDeep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: tooDeep) }
    }

    @Test func typedAccessors() throws {
        let value = try JSONValue(parsing: #"{"i":12,"f":2.5,"big":1e300,"s":"x","b":true,"a":[1,2],"n":null}"#)
        #expect(value["i"]?.intValue == 12)
        #expect(value["f"]?.intValue == nil)
        #expect(value["f"]?.doubleValue == 2.5)
        #expect(value["big"]?.intValue == nil)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["s"]?.intValue == nil)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?[1]?.intValue == 2)
        #expect(value["a"]?[2] == nil)
        #expect(value["n"]?.isNull == true)
        #expect(value["missing"] == nil)
    }

    @Test func codableRoundTripThroughFoundation() throws {
        let value: JSONValue = ["run": 12, "pace": 301.5, "ok": true, "tags": ["a", nil], "note": "é\n"]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try foundationValue(String(decoding: data, as: UTF8.self)) == value)

        struct Envelope: Codable, Equatable {
            var id: JSONValue
            var result: JSONValue
        }
        let envelope = Envelope(id: "x", result: ["n": [1, 2, 3]])
        #expect(try JSONDecoder().decode(Envelope.self, from: JSONEncoder().encode(envelope)) == envelope)
    }
}
