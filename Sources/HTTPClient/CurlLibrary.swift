import CCurl

/// libcurl's process-wide state. curl_global_init is not thread-safe in every libcurl build and
/// must run once before any handle exists: a static let's initializer runs exactly once, under
/// swift_once, on whichever thread gets there first.
enum CurlLibrary {
    /// CURLE_OK once libcurl (and OpenSSL under it) is ready; never cleaned up, as the process
    /// uses libcurl until it exits.
    static let initialization: UInt32 = curl_global_init(Int(CURL_GLOBAL_DEFAULT)).rawValue

    /// Initializes libcurl if nothing has; the error to report if that failed.
    static func ready() -> HTTPClientError? {
        let code = initialization
        guard code != CURLE_OK.rawValue else { return nil }
        return .other(code: Int(code), message: "curl_global_init failed: " + String(cString: curl_easy_strerror(CURLcode(code))))
    }
}
