import CCurl

/// The libcurl options of every exchange, set in one place (see
/// `HTTPClient` for why each is what it is).
enum CurlOptions {
  /// Sets the URL, the method's options that do not involve the body, the
  /// security options, the timeouts and the cap on `transfer`'s handle.
  /// With `keepConnection` (an `HTTPConnection`'s exchanges, all to one
  /// origin) the handle may keep its one connection open for the next
  /// exchange; otherwise the connection is closed when the exchange ends.
  /// Every other option is the same either way.
  ///
  /// - Throws: `HTTPClientError.transport` naming the option libcurl
  ///   refused (for example a protocol list an older libcurl does not know).
  static func apply(
    to transfer: CurlTransfer, request: HTTPRequest, limits: HTTPLimits, keepConnection: Bool = false
  ) throws(HTTPClientError) {
    let handle = transfer.handle
    let text: [(CURLoption, String, String)] = [
      (CURLOPT_URL, request.endpoint.text, "URL"),
      (CURLOPT_PROTOCOLS_STR, "http,https", "PROTOCOLS_STR"),
      (CURLOPT_REDIR_PROTOCOLS_STR, "http,https", "REDIR_PROTOCOLS_STR"),
      (CURLOPT_PROXY, "", "PROXY"),
      (CURLOPT_NOPROXY, "*", "NOPROXY"),
    ]
    for (option, value, name) in text {
      // libcurl copies string options (since 7.17).
      guard value.withCString({ tasker_curl_set_pointer(handle, option, $0) }) == CURLE_OK else {
        throw .transport(reason: "libcurl refused CURLOPT_\(name)")
      }
    }
    var numbers: [(CURLoption, Int, String)] = [
      (CURLOPT_FOLLOWLOCATION, 0, "FOLLOWLOCATION"),
      (CURLOPT_MAXREDIRS, 0, "MAXREDIRS"),
      (CURLOPT_SSL_VERIFYPEER, 1, "SSL_VERIFYPEER"),
      (CURLOPT_SSL_VERIFYHOST, 2, "SSL_VERIFYHOST"),
      (CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2, "SSLVERSION"),
      (CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1, "HTTP_VERSION"),
      (CURLOPT_NETRC, Int(CURL_NETRC_IGNORED.rawValue), "NETRC"),
      (CURLOPT_UNRESTRICTED_AUTH, 0, "UNRESTRICTED_AUTH"),
      (CURLOPT_NOSIGNAL, 1, "NOSIGNAL"),
      (CURLOPT_NOPROGRESS, 1, "NOPROGRESS"),
      (CURLOPT_CONNECTTIMEOUT, limits.connectTimeoutSeconds, "CONNECTTIMEOUT"),
      (CURLOPT_TIMEOUT, limits.totalTimeoutSeconds, "TIMEOUT"),
      (CURLOPT_FORBID_REUSE, keepConnection ? 0 : 1, "FORBID_REUSE"),
      (CURLOPT_MAXCONNECTS, 1, "MAXCONNECTS"),
    ]
    if request.method == "HEAD" { numbers.append((CURLOPT_NOBODY, 1, "NOBODY")) }
    for (option, value, name) in numbers where tasker_curl_set_long(handle, option, value) != CURLE_OK {
      throw .transport(reason: "libcurl refused CURLOPT_\(name)")
    }
    let cap = tasker_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limits.maximumResponseBytes))
    guard cap == CURLE_OK else { throw .transport(reason: "libcurl refused CURLOPT_MAXFILESIZE_LARGE") }
    if let caFile = limits.caFile {
      guard caFile.withCString({ tasker_curl_set_pointer(handle, CURLOPT_CAINFO, $0) }) == CURLE_OK else {
        throw .transport(reason: "libcurl refused CURLOPT_CAINFO")
      }
    }
  }

  /// Sets the method and the body, which libcurl reads in place (no copy):
  /// `body` must stay valid until the exchange ends.
  ///
  /// GET without a body and HEAD use libcurl's own requests; every other
  /// case sends the body (perhaps empty, with `Content-Length: 0`) under
  /// the method's name.
  static func setBody(_ body: UnsafeRawBufferPointer, method: String, on transfer: CurlTransfer) -> CURLcode {
    let handle = transfer.handle
    if let streaming = transfer.streaming, streaming.upload != nil {
      // libcurl's upload mode is a PUT whose body comes from the read callback.
      let steps = [
        tasker_curl_set_long(handle, CURLOPT_UPLOAD, 1),
        tasker_curl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(streaming.uploadByteCount)),
      ]
      return steps.first { $0 != CURLE_OK } ?? CURLE_OK
    }
    if method == "HEAD" || (method == "GET" && body.isEmpty) {
      return tasker_curl_set_long(handle, method == "HEAD" ? CURLOPT_NOBODY : CURLOPT_HTTPGET, 1)
    }
    // A non-null pointer even for an empty body, so libcurl does not read
    // the body from a callback instead.
    let empty: StaticString = ""
    let steps = [
      tasker_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
      tasker_curl_set_pointer(handle, CURLOPT_POSTFIELDS, body.baseAddress ?? UnsafeRawPointer(empty.utf8Start)),
      method == "POST" ? CURLE_OK : method.withCString { tasker_curl_set_pointer(handle, CURLOPT_CUSTOMREQUEST, $0) },
    ]
    return steps.first { $0 != CURLE_OK } ?? CURLE_OK
  }
}
