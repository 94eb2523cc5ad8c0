import CCurl

/// libcurl's process-wide state. It is loaded (dlopen) at the first request, not at start: see
/// Sources/CCurl/include/CCurl.h for why. curl_global_init is not thread-safe in every libcurl
/// build and must run once before any handle exists: a static let's initializer runs exactly
/// once, under swift_once, on whichever thread gets there first.
enum CurlLibrary {
    /// nil once libcurl (and OpenSSL under it) is ready; the error otherwise. Never cleaned up:
    /// the process uses libcurl until it exits.
    static let initialization: HTTPClientError? = {
        var reason = [CChar](repeating: 0, count: 256)
        guard pacer_curl_load(&reason, reason.count) == 0 else {
            return .other(code: -1, message: String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let code = pacer_curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard code == CURLE_OK else {
            return .other(code: Int(code.rawValue), message: "curl_global_init failed: " + String(cString: pacer_curl_easy_strerror(code)))
        }
        return nil
    }()

    /// Loads and initializes libcurl if nothing has; the error to report if that failed.
    static func ready() -> HTTPClientError? { initialization }
}
