import CCurl
import Threads

/// One request on its own thread: owns a libcurl easy handle from curl_easy_init to
/// curl_easy_cleanup and collects what libcurl's callbacks deliver. Created, run and dropped on
/// that thread; nothing else touches it (the cancellation flag is the one shared part).
///
/// A handle per request means no connection reuse: every request resolves, connects and does
/// a full TLS handshake. SOS alerts and run uploads are rare, so that buys simplicity (no
/// handle pool, no shared state between requests) at a cost of a round trip or two.
final class Transfer {
    private let prepared: PreparedRequest
    private let configuration: HTTPClient.Configuration
    private let cancellation: CancellationFlag

    private var headers: [(String, String)] = []
    private var body: [UInt8] = []
    private var exceededLimit = false
    /// CURLOPT_ERRORBUFFER: libcurl writes its own explanation of a failure here.
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init(_ prepared: PreparedRequest, configuration: HTTPClient.Configuration, cancellation: CancellationFlag) {
        self.prepared = prepared
        self.configuration = configuration
        self.cancellation = cancellation
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        errorBuffer.deallocate()
    }

    /// Performs the request, blocking this thread until it is answered or fails.
    func run() -> Result<HTTPResponse, HTTPClientError> {
        guard let handle = pacer_curl_easy_init() else {
            return .failure(.other(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed (out of memory?)"))
        }
        defer { pacer_curl_easy_cleanup(handle) }
        return run(on: handle)
    }

    /// The same on a handle that outlives the request (HTTPSession): curl_easy_reset clears
    /// every option but keeps its open connection and TLS session for the next request.
    func run(on handle: UnsafeMutableRawPointer) -> Result<HTTPResponse, HTTPClientError> {
        pacer_curl_easy_reset(handle)
        var list: UnsafeMutablePointer<curl_slist>? = nil
        defer { pacer_curl_slist_free_all(list) }
        for line in prepared.headerLines {
            guard let longer = pacer_curl_slist_append(list, line) else {
                return .failure(.other(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_slist_append failed"))
            }
            list = longer
        }
        let code: CURLcode
        do {
            code = try withExtendedLifetime(self) { () throws(HTTPClientError) -> CURLcode in
                try prepared.request.body.withUnsafeBufferPointer { (bytes) throws(HTTPClientError) -> CURLcode in
                    // POSTFIELDS is not copied: the body must stay put until curl_easy_perform returns.
                    let empty: StaticString = ""
                    let start = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(empty.utf8Start)
                    try configure(handle, headers: list, body: UnsafeMutableRawPointer(mutating: start))
                    return pacer_curl_easy_perform(handle)
                }
            }
        } catch {
            return .failure(error)
        }
        guard code == CURLE_OK else { return .failure(failure(code, handle: handle)) }
        var status = 0
        _ = pacer_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    private func configure(_ handle: UnsafeMutableRawPointer, headers list: UnsafeMutablePointer<curl_slist>?, body: UnsafeMutableRawPointer) throws(HTTPClientError) {
        let request = prepared.request
        func check(_ code: CURLcode, _ option: String) throws(HTTPClientError) {
            // Every option matters (TLS verification above all): one libcurl refuses fails the request.
            guard code == CURLE_OK else {
                throw .other(code: Int(code.rawValue), message: "setting \(option): " + String(cString: pacer_curl_easy_strerror(code)))
            }
        }
        func set(_ option: CURLoption, _ value: Int, _ name: String) throws(HTTPClientError) {
            try check(pacer_curl_setopt_long(handle, option, value), name)
        }
        func set(_ option: CURLoption, _ value: String?, _ name: String) throws(HTTPClientError) {
            // libcurl copies string options.
            let code = if let value { pacer_curl_setopt_string(handle, option, value) } else { pacer_curl_setopt_string(handle, option, nil) }
            try check(code, name)
        }

        try check(pacer_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try set(CURLOPT_URL, request.url, "CURLOPT_URL")
        try set(CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR")
        // libcurl's timeouts otherwise use SIGALRM around DNS lookups, which is not safe with
        // threads (and the daemon's signals belong to the service lifecycle).
        try set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1), "CURLOPT_HTTP_VERSION")
        // A 3xx is returned as a response: a POST must never be replayed elsewhere behind our back.
        try set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        // Proxy variables in the environment are ignored: where requests go must not depend on
        // how the daemon happened to be started.
        try set(CURLOPT_PROXY, "", "CURLOPT_PROXY")

        // TLS: always verified, at least TLS 1.2.
        try set(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
        try set(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
        try set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2), "CURLOPT_SSLVERSION")
        if let caFile = configuration.caFile {
            // Only this CA: without clearing CAPATH, libcurl would also trust /etc/ssl/certs.
            try set(CURLOPT_CAINFO, caFile, "CURLOPT_CAINFO")
            try set(CURLOPT_CAPATH, nil, "CURLOPT_CAPATH")
        }
        if let certificate = configuration.clientCertificate {
            try set(CURLOPT_SSLCERT, certificate, "CURLOPT_SSLCERT")
            try set(CURLOPT_SSLCERTTYPE, "PEM", "CURLOPT_SSLCERTTYPE")
            if let key = configuration.clientKey { try set(CURLOPT_SSLKEY, key, "CURLOPT_SSLKEY") }
        }

        try set(CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout), "CURLOPT_TIMEOUT_MS")
        if let connectTimeout = request.connectTimeout {
            try set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(connectTimeout), "CURLOPT_CONNECTTIMEOUT_MS")
        }
        try set(CURLOPT_USERAGENT, configuration.userAgent, "CURLOPT_USERAGENT")
        try check(pacer_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")

        switch request.method {
        case "HEAD":
            try set(CURLOPT_NOBODY, 1, "CURLOPT_NOBODY")
        case _ where !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method):
            try check(pacer_curl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)), "CURLOPT_POSTFIELDSIZE_LARGE")
            try check(pacer_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, body), "CURLOPT_POSTFIELDS")
            if request.method != "POST" { try set(CURLOPT_CUSTOMREQUEST, request.method, "CURLOPT_CUSTOMREQUEST") }
        case "GET":
            try set(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        default:
            try set(CURLOPT_CUSTOMREQUEST, request.method, "CURLOPT_CUSTOMREQUEST")
        }

        // A declared Content-Length over the limit fails at once; the write callback catches
        // bodies of unknown length (and a limit of 0, which to libcurl would mean none).
        if configuration.maxResponseBytes > 0 {
            try check(pacer_curl_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(configuration.maxResponseBytes)), "CURLOPT_MAXFILESIZE_LARGE")
        }

        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(pacer_curl_setopt_write_function(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().receiveBody(data, size * count)
        }, "CURLOPT_WRITEFUNCTION")
        try check(pacer_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
        try check(pacer_curl_setopt_write_function(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().receiveHeader(data, size * count)
        }, "CURLOPT_HEADERFUNCTION")
        try check(pacer_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
        // Cancellation: libcurl calls this often while data flows and about once a second while
        // it waits, so a cancelled request ends within about a second.
        try set(CURLOPT_NOPROGRESS, 0, "CURLOPT_NOPROGRESS")
        try check(pacer_curl_setopt_xferinfo_function(handle) { context, _, _, _, _ in
            Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().cancellation.isCancelled ? 1 : 0
        }, "CURLOPT_XFERINFOFUNCTION")
        try check(pacer_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context), "CURLOPT_XFERINFODATA")
    }

    /// CURLOPT_WRITEFUNCTION: a piece of the body. Returning less than `count` aborts the transfer.
    private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard count > 0, let data else { return 0 }
        guard body.count + count <= configuration.maxResponseBytes else {
            exceededLimit = true
            return 0
        }
        body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: count))
        return count
    }

    /// CURLOPT_HEADERFUNCTION: one header line, CRLF included. Only the final response's headers
    /// are kept: a status line (of a 100 Continue, say) starts the list afresh.
    private func receiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard count > 0, let data else { return count }
        var line = String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
        while let last = line.last, last.isNewline { line.removeLast() }  // "\r\n" is one Character
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
        } else if line.first == " " || line.first == "\t" {
            // An obsolete folded continuation of the previous header's value.
            if !headers.isEmpty { headers[headers.count - 1].1 += " " + Self.trimmed(Substring(line)) }
        } else if let colon = line.firstIndex(of: ":") {
            headers.append((String(line[..<colon]), Self.trimmed(line[line.index(after: colon)...])))
        }
        return count
    }

    /// The error for a failed curl_easy_perform, with libcurl's explanation as the detail.
    private func failure(_ code: CURLcode, handle: UnsafeMutableRawPointer) -> HTTPClientError {
        let buffered = String(cString: errorBuffer)
        let detail = buffered.isEmpty ? String(cString: pacer_curl_easy_strerror(code)) : buffered
        if exceededLimit || code == CURLE_FILESIZE_EXCEEDED { return .tooLarge(limit: configuration.maxResponseBytes) }
        if code == CURLE_ABORTED_BY_CALLBACK && cancellation.isCancelled { return .cancelled }
        var limit = prepared.request.timeout
        if code == CURLE_OPERATION_TIMEDOUT, let connectTimeout = prepared.request.connectTimeout {
            // PRETRANSFER is when connecting (TCP and TLS) was done; 0: it never was.
            var pretransfer: curl_off_t = 0
            _ = pacer_curl_getinfo_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
            if pretransfer == 0 { limit = min(connectTimeout, limit) }
        }
        return HTTPClientError(curl: code, detail: detail, host: prepared.host, port: prepared.port, timeout: limit)
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// libcurl's millisecond timeouts; at least 1, since 0 means "no timeout" to libcurl.
    private static func milliseconds(_ duration: Duration) -> Int {
        max(1, Int(MonotonicTime.pollMilliseconds(duration)))
    }
}
