internal import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Reading and appending `BusValue`s on an sd_bus_message. Only the bus thread calls these.
enum BusMessageCoding {
    struct Failure: Error {
        let operation: String
        let code: Int32
        var busError: BusError { .local(operation, returned: code) }
    }

    private static func check(_ result: Int32, _ operation: String) throws(Failure) {
        if result < 0 { throw Failure(operation: operation, code: result) }
    }

    // MARK: Reading

    /// Every remaining value at the current level of the message.
    static func readAll(_ message: OpaquePointer) throws(Failure) -> [BusValue] {
        var values: [BusValue] = []
        while let value = try readNext(message) { values.append(value) }
        return values
    }

    /// The next value, or nil at the end of the current container.
    private static func readNext(_ message: OpaquePointer) throws(Failure) -> BusValue? {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>? = nil
        let peeked = sd_bus_message_peek_type(message, &type, &contentsPointer)
        try check(peeked, "sd_bus_message_peek_type")
        if peeked == 0 { return nil }
        // Copy before the next call: the pointer is into the message's signature.
        let contents = contentsPointer.map { String(cString: $0) } ?? ""

        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "a"):
            if contents == "y" {
                var data: UnsafeRawPointer? = nil
                var size = 0
                try check(sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &data, &size), "sd_bus_message_read_array")
                guard let data, size > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeRawBufferPointer(start: data, count: size)))
            }
            try check(sd_bus_message_enter_container(message, type, contents), "enter array")
            var elements: [BusValue] = []
            while let element = try readNext(message) { elements.append(element) }
            try check(sd_bus_message_exit_container(message), "exit array")
            return .array(element: contents, elements)
        case UInt8(ascii: "v"):
            try check(sd_bus_message_enter_container(message, type, contents), "enter variant")
            guard let inner = try readNext(message) else { throw Failure(operation: "empty variant", code: -EBADMSG) }
            try check(sd_bus_message_exit_container(message), "exit variant")
            return .variant(inner)
        case UInt8(ascii: "r"), UInt8(ascii: "e"):
            try check(sd_bus_message_enter_container(message, type, contents), "enter struct")
            var fields: [BusValue] = []
            while let field = try readNext(message) { fields.append(field) }
            try check(sd_bus_message_exit_container(message), "exit struct")
            if UInt8(bitPattern: type) == UInt8(ascii: "e") {
                guard fields.count == 2 else { throw Failure(operation: "dict entry of \(fields.count) fields", code: -EBADMSG) }
                return .dictEntry(fields[0], fields[1])
            }
            return .structure(fields)
        default:
            return try readBasic(message, type)
        }
    }

    private static func readBasic(_ message: OpaquePointer, _ type: CChar) throws(Failure) -> BusValue {
        func read<T: BitwiseCopyable>(_ initial: T) throws(Failure) -> T {
            var value = initial
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return value
        }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try read(UInt8(0)))
        // sd-bus stores a boolean as a C int.
        case UInt8(ascii: "b"): return .bool(try read(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try read(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try read(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try read(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try read(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try read(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try read(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try read(Double(0)))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let pointer = try read(UnsafePointer<CChar>?.none)
            let text = pointer.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "s"): return .string(text)
            case UInt8(ascii: "o"): return .objectPath(text)
            default: return .signature(text)
            }
        case UInt8(ascii: "h"):
            // File descriptors (AcquireNotify) are not used: say so instead of misreading.
            throw Failure(operation: "unix fd values are not supported", code: -EOPNOTSUPP)
        default:
            throw Failure(operation: "unknown type '\(Character(Unicode.Scalar(UInt8(bitPattern: type))))'", code: -EBADMSG)
        }
    }

    // MARK: Appending

    static func append(_ values: [BusValue], to message: OpaquePointer) throws(Failure) {
        for value in values { try append(value, to: message) }
    }

    private static func append(_ value: BusValue, to message: OpaquePointer) throws(Failure) {
        func basic<T: BitwiseCopyable>(_ type: UInt8, _ raw: T) throws(Failure) {
            var copy = raw
            try check(sd_bus_message_append_basic(message, CChar(type), &copy), "sd_bus_message_append_basic")
        }
        func text(_ type: UInt8, _ string: String) throws(Failure) {
            let result = string.withCString { sd_bus_message_append_basic(message, CChar(type), $0) }
            try check(result, "sd_bus_message_append_basic")
        }
        func container(_ type: UInt8, _ contents: String, _ inner: [BusValue]) throws(Failure) {
            try check(sd_bus_message_open_container(message, CChar(type), contents), "sd_bus_message_open_container")
            for element in inner { try append(element, to: message) }
            try check(sd_bus_message_close_container(message), "sd_bus_message_close_container")
        }
        switch value {
        case .byte(let v): try basic(UInt8(ascii: "y"), v)
        case .bool(let v): try basic(UInt8(ascii: "b"), Int32(v ? 1 : 0))
        case .int16(let v): try basic(UInt8(ascii: "n"), v)
        case .uint16(let v): try basic(UInt8(ascii: "q"), v)
        case .int32(let v): try basic(UInt8(ascii: "i"), v)
        case .uint32(let v): try basic(UInt8(ascii: "u"), v)
        case .int64(let v): try basic(UInt8(ascii: "x"), v)
        case .uint64(let v): try basic(UInt8(ascii: "t"), v)
        case .double(let v): try basic(UInt8(ascii: "d"), v)
        case .string(let v): try text(UInt8(ascii: "s"), v)
        case .objectPath(let v): try text(UInt8(ascii: "o"), v)
        case .signature(let v): try text(UInt8(ascii: "g"), v)
        case .bytes(let bytes):
            let result = bytes.withUnsafeBytes { buffer in
                sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), buffer.baseAddress, buffer.count)
            }
            try check(result, "sd_bus_message_append_array")
        case .array(let element, let elements): try container(UInt8(ascii: "a"), element, elements)
        case .dictEntry(let key, let inner):
            try container(UInt8(ascii: "e"), key.signature + inner.signature, [key, inner])
        case .structure(let fields):
            try container(UInt8(ascii: "r"), fields.map(\.signature).joined(), fields)
        case .variant(let inner): try container(UInt8(ascii: "v"), inner.signature, [inner])
        }
    }
}
