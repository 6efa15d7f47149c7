import TaskCrypto
import TaskerHTTP

/// A WebDAV server as the storage (RFC 4918): Nextcloud, ownCloud, Apache
/// mod_dav, `rclone serve webdav`. Objects are written with
/// `PUT` and `If-None-Match: *`, which the server refuses (412) when the
/// name exists, so a name never holds half an object and is never
/// replaced; folders are made with `MKCOL` and listed with `PROPFIND`
/// (depth 1). TLS is verified against the system's store or the
/// certificate authority pinned at setup; plain `http` only to loopback.
/// A target's requests share one kept-alive connection (`HTTPConnection`),
/// never another target's.
public struct WebDAVTarget: SyncTarget {
  /// The storage root, `<url>/tasker-sync/`.
  public let root: HTTPEndpoint
  let user: String?
  let password: SecureBytes?
  let caFile: String?
  let timeoutSeconds: Int
  /// The one connection of this target, to its server with its credential.
  let connection: HTTPConnection

  /// The target under `url`, with the credential for Basic authentication.
  ///
  /// - Throws: `SyncError.network` for a URL that is not `https`, or
  ///   `http` to another host than loopback.
  public init(
    url: HTTPEndpoint, user: String?, password: SecureBytes?, caFile: String?, timeoutSeconds: Int = 120
  ) throws {
    guard url.scheme == "https" || url.scope == .loopback else {
      throw SyncError.network(.plainHTTPRefused(host: url.host))
    }
    root = url.appending(path: "tasker-sync/")
    self.user = user
    self.password = password
    self.caFile = caFile
    self.timeoutSeconds = max(1, timeoutSeconds)
    let credential = user.flatMap { user in password.map { HTTPCredential.basic(user: user, password: $0) } }
    connection = HTTPConnection(origin: root, credential: credential, allowPlainHTTP: root.scope == .loopback)
  }

  /// The root's URL.
  public var location: String { root.text }

  /// Per exchange: 10 s to connect (or the whole timeout when shorter),
  /// `timeoutSeconds` in all, and room for the largest object.
  var limits: HTTPLimits {
    HTTPLimits(
      connectTimeoutSeconds: min(10, timeoutSeconds), totalTimeoutSeconds: timeoutSeconds,
      maximumResponseBytes: SyncObjectFormat.maximumObjectByteCount + (1 << 20), caFile: caFile)
  }

  func send(
    _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [],
    streaming: HTTPStreaming? = nil, limit: Int? = nil, seconds: Int? = nil
  ) throws -> HTTPResponse {
    let endpoint = path.isEmpty ? root : root.appending(path: path)
    let response: HTTPResponse
    do {
      let bounds =
        limit == nil && seconds == nil
        ? limits
        : HTTPLimits(
          connectTimeoutSeconds: limits.connectTimeoutSeconds,
          totalTimeoutSeconds: seconds ?? limits.totalTimeoutSeconds,
          maximumResponseBytes: limit ?? limits.maximumResponseBytes, caFile: caFile)
      response = try connection.send(
        method, endpoint, headers: headers.map { (name: $0.0, value: $0.1) }, body: body, limits: bounds,
        streaming: streaming)
    } catch {
      throw SyncError.network(error)
    }
    switch response.status {
    case 401, 403: throw SyncError.credentialRejected(url: endpoint.text, status: response.status)
    case 507: throw SyncError.storageFull(url: endpoint.text)
    default: return response
    }
  }

  func failed(_ response: HTTPResponse, _ path: String) -> SyncError {
    .serverFailed(url: (path.isEmpty ? root : root.appending(path: path)).text, status: response.status)
  }

  /// See `SyncTarget.prepare`.
  public func prepare() throws {
    for folder in ["", "d/", "t/"] {
      let response = try send("MKCOL", folder)
      // 201: made; 405: it exists; 409: the URL's parent does not exist.
      guard response.status == 201 || response.status == 405 else {
        if response.status == 409 || response.status == 404 { throw SyncError.targetMissing(path: root.text) }
        throw failed(response, folder)
      }
    }
  }

  /// See `SyncTarget.readMarker`.
  public func readMarker() throws -> [UInt8]? {
    try get("target")
  }

  /// See `SyncTarget.createMarker`.
  public func createMarker(_ bytes: [UInt8]) throws -> Bool {
    try put("target", bytes) == .created
  }

  /// See `SyncTarget.devices`.
  public func devices() throws -> [String] {
    try list("d/").filter { SyncHex.isID($0) }.sorted()
  }

  /// See `SyncTarget.sequence(of:)`.
  public func sequence(of device: String) throws -> [UInt64] {
    try list("d/\(device)/").compactMap { SyncHex.isID($0, bytes: 8) ? UInt64($0, radix: 16) : nil }.sorted()
  }

  /// See `SyncTarget.read(device:seq:limit:)`.
  public func read(device: String, seq: UInt64, limit: Int) throws -> [UInt8]? {
    try get("d/\(device)/\(syncSeqName(seq))")
  }

  /// See `SyncTarget.create(device:seq:bytes:)`.
  public func create(device: String, seq: UInt64, bytes: [UInt8]) throws -> SyncCreation {
    let path = "d/\(device)/\(syncSeqName(seq))"
    // A device's first object: its folder is made first, so the object's bytes are not sent twice.
    if seq == 1 { try makeFolder("d/\(device)/") }
    do {
      return try put(path, bytes)
    } catch SyncError.serverFailed(_, 409) {
      // The device's folder is missing: make it, then try once more.
      try makeFolder("d/\(device)/")
      return try put(path, bytes)
    }
  }

  /// See `SyncTarget.createBlob(device:blob:byteCount:read:)`: a
  /// streamed `PUT` with `If-None-Match: *` to `a/<device>/<blob>`. A
  /// server keeps a `PUT` only when its whole body arrived (mod_dav_fs
  /// writes it to a temporary file first).
  public func createBlob(
    device: String, blob: String, byteCount: UInt64, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int
  ) throws -> Bool {
    try makeFolder("a/")
    try makeFolder("a/\(device)/")
    let response = try send(
      "PUT", "a/\(device)/\(blob)", headers: [("If-None-Match", "*"), ("Content-Type", "application/octet-stream")],
      streaming: HTTPStreaming(uploading: Int(byteCount), read: read), seconds: seconds(for: byteCount))
    switch response.status {
    case 200, 201, 204: return true
    case 412: return false
    default: throw failed(response, "a/\(device)/\(blob)")
    }
  }

  /// See `SyncTarget.readBlob(device:blob:limit:into:)`: a streamed `GET`.
  public func readBlob(
    device: String, blob: String, limit: UInt64, into write: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> Bool {
    // The stream lives only as long as the exchange.
    let response = try withoutActuallyEscaping(write) { write in
      try send(
        "GET", "a/\(device)/\(blob)", streaming: HTTPStreaming(downloadingInto: write),
        limit: Int(min(limit + 1, 1 << 62)), seconds: seconds(for: limit))
    }
    switch response.status {
    case 200: return true
    case 404, 410: return false
    default: throw failed(response, "a/\(device)/\(blob)")
    }
  }

  /// See `SyncTarget.remove(device:seq:)`: a `DELETE`; 404 is fine.
  public func remove(device: String, seq: UInt64) throws {
    try delete("d/\(device)/\(syncSeqName(seq))")
  }

  /// See `SyncTarget.removeBlob(device:blob:)`: a `DELETE`; 404 is fine.
  public func removeBlob(device: String, blob: String) throws {
    try delete("a/\(device)/\(blob)")
  }

  /// DELETE `path`; one that is gone already (404, 410) is fine.
  private func delete(_ path: String) throws {
    let response = try send("DELETE", path)
    guard [200, 202, 204, 404, 410].contains(response.status) else { throw failed(response, path) }
  }

  /// The time a blob's exchange may take: the timeout, and one second
  /// more per 256 KiB (a large attachment on a slow link still fits).
  func seconds(for byteCount: UInt64) -> Int {
    timeoutSeconds + Int(min(byteCount >> 18, 1 << 40))
  }

  /// MKCOL `path`; one that exists already (405) is fine.
  private func makeFolder(_ path: String) throws {
    let made = try send("MKCOL", path)
    guard made.status == 201 || made.status == 405 else { throw failed(made, path) }
  }

  private func get(_ path: String) throws -> [UInt8]? {
    let response = try send("GET", path)
    switch response.status {
    case 200: return response.body
    case 404, 410: return nil
    default: throw failed(response, path)
    }
  }

  private func put(_ path: String, _ bytes: [UInt8]) throws -> SyncCreation {
    let response = try send(
      "PUT", path, headers: [("If-None-Match", "*"), ("Content-Type", "application/octet-stream")], body: bytes)
    switch response.status {
    case 200, 201, 204: return .created
    case 412: return .existed(try get(path) ?? [])
    default: throw failed(response, path)
    }
  }

  private func list(_ folder: String) throws -> [String] {
    let body = Array(
      """
      <?xml version="1.0" encoding="utf-8"?>
      <propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>
      """.utf8)
    let response = try send(
      "PROPFIND", folder, headers: [("Depth", "1"), ("Content-Type", "application/xml; charset=utf-8")], body: body)
    switch response.status {
    case 207: return WebDAVListing.names(in: response.body, under: root.appending(path: folder).path)
    case 404: return []
    default: throw failed(response, folder)
    }
  }
}

/// The names a `PROPFIND` multistatus lists directly under a folder:
/// the last segment of each `href` (percent-decoded) whose parent is the
/// folder. Anything else in the answer is ignored; the names are checked
/// by the caller against the only shapes version 1 writes.
enum WebDAVListing {
  static func names(in body: [UInt8], under folder: String) -> [String] {
    var names: [String] = []
    var index = 0
    let open = Array("href>".utf8)
    while let start = find(open, in: body, from: index) {
      // The element must open here: "<href>" or "<prefix:href>".
      var back = start - 1
      while back >= 0, body[back] != UInt8(ascii: "<"), body[back] != UInt8(ascii: "/") { back -= 1 }
      let contentStart = start + open.count
      guard let end = body[contentStart...].firstIndex(of: UInt8(ascii: "<")) else { break }
      index = end
      guard back >= 0, body[back] == UInt8(ascii: "<") else { continue }
      guard let href = percentDecoded(Array(body[contentStart..<end])) else { continue }
      var path = href
      // An absolute URL: keep its path.
      if !path.hasPrefix("/"), let colon = path.firstIndex(of: ":"), path[colon...].hasPrefix("://") {
        path = String(path[colon...].dropFirst(3).drop { $0 != "/" })
      }
      let parent = folder.hasSuffix("/") ? folder : folder + "/"
      guard path.hasPrefix(parent) else { continue }
      var name = String(path.dropFirst(parent.count))
      if name.hasSuffix("/") { name.removeLast() }
      if !name.isEmpty, !name.contains("/") { names.append(name) }
    }
    return names
  }

  static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
    for offset in start...(haystack.count - needle.count)
    where haystack[offset] == needle[0] && haystack[offset..<(offset + needle.count)].elementsEqual(needle) {
      return offset
    }
    return nil
  }

  static func percentDecoded(_ bytes: [UInt8]) -> String? {
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "%") {
        guard index + 2 < bytes.count,
          let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
        else { return nil }
        out.append(value)
        index += 3
      } else {
        out.append(bytes[index])
        index += 1
      }
    }
    return String(validating: out, as: UTF8.self)
  }
}
