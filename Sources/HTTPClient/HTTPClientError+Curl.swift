import CCurl

extension HTTPClientError {
    /// The error for a CURLcode from curl_easy_perform. `detail` is libcurl's error buffer;
    /// `timeout` the limit that applied, for a timeout.
    init(curl code: CURLcode, detail: String, host: String, port: Int, timeout: Duration) {
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            self = .invalidURL(detail)
        case CURLE_COULDNT_RESOLVE_HOST:
            self = .couldNotResolve(host: host)
        case CURLE_COULDNT_CONNECT:
            self = .couldNotConnect(host: host, port: port, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            self = .timedOut(after: timeout, detail: detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_CLIENTCERT,
            CURLE_USE_SSL_FAILED:
            self = .tls(detail)
        case CURLE_SEND_ERROR, CURLE_READ_ERROR:
            self = .sendFailed(detail)
        case CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_WEIRD_SERVER_REPLY,
            CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3:
            self = .receiveFailed(detail)
        default:
            self = .other(code: Int(code.rawValue), message: detail)
        }
    }
}
