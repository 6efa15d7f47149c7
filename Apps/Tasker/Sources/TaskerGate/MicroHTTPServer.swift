import CMicroHTTPD
import FoundationEssentials
import TaskerCore

// The gate's HTTP binding: libmicrohttpd does all HTTP parsing. This is the
// only file of the app that imports CMicroHTTPD, which loads the library
// when the first server starts (no other command loads it).

/// One complete HTTP request, as the binding hands it to the gate.
public struct HTTPRequest: Sendable {
  /// The method, e.g. `POST`.
  public let method: String
  /// The path of the URL, e.g. `/mcp`.
  public let path: String
  /// The headers, names in lower case. A name sent more than once keeps
  /// every value in order.
  public let headers: [String: [String]]
  /// The body, at most `MicroHTTPServer.Limits.bodyBytes` long.
  public let body: [UInt8]

  /// Makes a request (for tests and the binding).
  ///
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path.
  ///   - headers: header values by lower-case name.
  ///   - body: the body.
  public init(method: String, path: String, headers: [String: [String]], body: [UInt8]) {
    self.method = method
    self.path = path
    self.headers = headers
    self.body = body
  }

  /// Why the headers do not frame one body in exactly one way, or nil when
  /// they do: `Content-Length` more than once, as a list or not in plain
  /// digits, or together with `Transfer-Encoding` (RFC 9112 §6.3: a
  /// server must not guess which one frames the message).
  ///
  /// - Parameter headers: header values by lower-case name.
  /// - Returns: one line for the client, or nil.
  public static func framingProblem(_ headers: [String: [String]]) -> String? {
    guard let lengths = headers["content-length"] else { return nil }
    guard lengths.count == 1, let length = lengths.first, (1...19).contains(length.utf8.count),
      length.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    else { return "send exactly one Content-Length, in plain digits" }
    if headers["transfer-encoding"] != nil { return "send Content-Length or Transfer-Encoding, not both" }
    return nil
  }

  /// The value of a header sent exactly once; nil when missing or repeated.
  ///
  /// - Parameter name: the header name, in lower case.
  public func single(_ name: String) -> String? {
    guard let values = headers[name], values.count == 1 else { return nil }
    return values[0]
  }
}

/// One HTTP response.
public struct HTTPResponse: Equatable, Sendable {
  /// The status code.
  public let status: Int
  /// Extra headers, in order.
  public let headers: [HTTPHeader]
  /// The body.
  public let body: [UInt8]

  /// Makes a response.
  ///
  /// - Parameters:
  ///   - status: the status code.
  ///   - headers: extra headers.
  ///   - body: the body.
  public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}

/// One response header.
public struct HTTPHeader: Equatable, Sendable {
  /// The name.
  public let name: String
  /// The value.
  public let value: String

  /// Makes a header.
  ///
  /// - Parameters:
  ///   - name: the name.
  ///   - value: the value.
  public init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }
}

/// An HTTP/1.1 server on libmicrohttpd, with hard limits, that hands each
/// complete request to one handler.
///
/// The handler runs on libmicrohttpd's worker threads, possibly at once on
/// several; it must be thread-safe.
public final class MicroHTTPServer {
  /// The server's hard limits.
  public struct Limits: Sendable {
    /// The largest request body; a larger one is answered 413 and never
    /// buffered: 1 MiB.
    public var bodyBytes = 1 << 20
    /// A connection idle this many seconds is closed: 5.
    public var idleTimeoutSeconds = 5
    /// The most open connections; more are refused at accept: 64.
    public var connections = 64
    /// Memory libmicrohttpd may use per connection for the request line
    /// and headers; a larger header block is refused: 32 KiB.
    public var headerBytes = 32 * 1024
    /// Worker threads: 4.
    public var threads = 4

    /// The default limits.
    public init() {}
  }

  private let handler: (HTTPRequest) -> HTTPResponse
  private let limits: Limits
  private var daemon: OpaquePointer?

  /// Starts listening.
  ///
  /// - Parameters:
  ///   - address: the IPv4 address's four bytes, e.g. `[127, 0, 0, 1]`.
  ///   - port: the TCP port.
  ///   - limits: the hard limits.
  ///   - handler: answers each complete request.
  /// - Throws: `GateError.httpLibraryUnavailable` when libmicrohttpd
  ///   cannot be loaded; `GateError.httpStartFailed` when it cannot start
  ///   (the port is in use or not allowed).
  public init(
    address: [UInt8], port: UInt16, limits: Limits = Limits(), handler: @escaping (HTTPRequest) -> HTTPResponse
  ) throws {
    precondition(address.count == 4, "an IPv4 address has four bytes")
    if let reason = tasker_mhd_load() {
      throw GateError.httpLibraryUnavailable(reason: String(cString: reason))
    }
    self.handler = handler
    self.limits = limits
    // struct sockaddr_in, laid out as Linux defines it: family (host order),
    // port (network order), address (network order), 8 bytes of zero.
    var socketAddress = [UInt8](repeating: 0, count: 16)
    socketAddress[0] = 2  // AF_INET, little-endian u16
    socketAddress[2] = UInt8(port >> 8)
    socketAddress[3] = UInt8(port & 0xff)
    socketAddress.replaceSubrange(4..<8, with: address)
    let context = Unmanaged.passUnretained(self).toOpaque()
    let flags = MHD_USE_AUTO.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
    daemon = socketAddress.withUnsafeMutableBytes { sockaddr -> OpaquePointer? in
      var options: [MHD_OptionItem] = [
        Self.option(MHD_OPTION.CONNECTION_LIMIT, limits.connections),
        Self.option(MHD_OPTION.CONNECTION_TIMEOUT, limits.idleTimeoutSeconds),
        Self.option(MHD_OPTION.CONNECTION_MEMORY_LIMIT, limits.headerBytes),
        Self.option(MHD_OPTION.THREAD_POOL_SIZE, limits.threads),
        MHD_OptionItem(option: MHD_OPTION.SOCK_ADDR, value: 0, ptr_value: sockaddr.baseAddress),
        MHD_OptionItem(
          option: MHD_OPTION.NOTIFY_COMPLETED, value: unsafeBitCast(completed, to: Int.self), ptr_value: context),
        MHD_OptionItem(option: MHD_OPTION.END, value: 0, ptr_value: nil),
      ]
      return options.withUnsafeMutableBufferPointer { items in
        withVaList([MHD_OPTION.ARRAY.rawValue, items.baseAddress!, MHD_OPTION.END.rawValue]) { arguments in
          tasker_mhd_start_daemon_va(flags, port, nil, nil, accessHandler, context, arguments)
        }
      }
    }
    guard daemon != nil else {
      throw GateError.httpStartFailed(address: address.map(String.init).joined(separator: ".") + ":\(port)")
    }
  }

  /// Stops listening and closes every connection; waits for handlers that
  /// are running.
  public func stop() {
    if let daemon { tasker_mhd_stop_daemon(daemon) }
    daemon = nil
  }

  deinit { stop() }

  private static func option(_ option: MHD_OPTION, _ value: Int) -> MHD_OptionItem {
    MHD_OptionItem(option: option, value: value, ptr_value: nil)
  }

  /// The state of one request while its body arrives.
  fileprivate final class Pending {
    var headers: [String: [String]] = [:]
    var body: [UInt8] = []
    var tooLarge = false
  }

  /// Called by libmicrohttpd for the headers, each body chunk, and the end.
  fileprivate func access(
    connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
    uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
  ) -> MHD_Result {
    guard let stored = state.pointee else {
      let pending = Pending()
      tasker_mhd_get_connection_values(
        connection, MHD_ValueKind.HEADER_KIND, collectHeader, Unmanaged.passUnretained(pending).toOpaque())
      // Refused before the body is read, on a connection that then closes,
      // so no byte of an ambiguous body is read as another request.
      if let problem = HTTPRequest.framingProblem(pending.headers) {
        return queue(
          connection,
          HTTPResponse(
            status: 400, headers: [HTTPHeader("Content-Type", "text/plain"), HTTPHeader("Connection", "close")],
            body: Array((problem + "\n").utf8)))
      }
      if let length = pending.headers["content-length"]?.first, let count = Int(length), count > limits.bodyBytes {
        return queue(connection, tooLarge())
      }
      state.pointee = Unmanaged.passRetained(pending).toOpaque()
      return MHD_Result.YES
    }
    let pending = Unmanaged<Pending>.fromOpaque(stored).takeUnretainedValue()
    if uploadSize.pointee > 0 {
      if let upload, !pending.tooLarge, pending.body.count + uploadSize.pointee <= limits.bodyBytes {
        upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
          pending.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
        }
      } else {
        pending.tooLarge = true
        pending.body = []
      }
      uploadSize.pointee = 0
      return MHD_Result.YES
    }
    if pending.tooLarge { return queue(connection, tooLarge()) }
    let request = HTTPRequest(method: method, path: url, headers: pending.headers, body: pending.body)
    return queue(connection, handler(request))
  }

  private func tooLarge() -> HTTPResponse {
    HTTPResponse(
      status: 413, headers: [HTTPHeader("Content-Type", "text/plain"), HTTPHeader("Connection", "close")],
      body: Array("request body larger than \(limits.bodyBytes) bytes\n".utf8))
  }

  private func queue(_ connection: OpaquePointer, _ response: HTTPResponse) -> MHD_Result {
    let made = response.body.withUnsafeBytes { bytes in
      tasker_mhd_create_response_from_buffer(
        bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
    }
    guard let made else { return MHD_Result.NO }
    defer { tasker_mhd_destroy_response(made) }
    for header in response.headers
    where tasker_mhd_add_response_header(made, header.name, header.value) != MHD_Result.YES {
      return MHD_Result.NO
    }
    return tasker_mhd_queue_response(connection, UInt32(response.status), made)
  }
}

private let accessHandler: MHD_AccessHandlerCallback = {
  context, connection, url, method, _, upload, uploadSize, state in
  guard let context, let connection, let url, let method, let uploadSize, let state else { return MHD_Result.NO }
  let server = Unmanaged<MicroHTTPServer>.fromOpaque(context).takeUnretainedValue()
  return server.access(
    connection: connection, url: String(cString: url), method: String(cString: method), upload: upload,
    uploadSize: uploadSize, state: state)
}

private let completed: MHD_RequestCompletedCallback = { _, _, state, _ in
  guard let state, let stored = state.pointee else { return }
  Unmanaged<MicroHTTPServer.Pending>.fromOpaque(stored).release()
  state.pointee = nil
}

private let collectHeader: MHD_KeyValueIterator = { context, _, key, value in
  guard let context, let key else { return MHD_Result.YES }
  let pending = Unmanaged<MicroHTTPServer.Pending>.fromOpaque(context).takeUnretainedValue()
  // Names are ASCII tokens (RFC 9110): lower-cased byte by byte.
  var length = 0
  while key[length] != 0 { length += 1 }
  let name = String(unsafeUninitializedCapacity: length) { buffer in
    for index in 0..<length { buffer[index] = ASCIIText.lowercased(UInt8(bitPattern: key[index])) }
    return length
  }
  pending.headers[name, default: []].append(value.map { String(cString: $0) } ?? "")
  return MHD_Result.YES
}
