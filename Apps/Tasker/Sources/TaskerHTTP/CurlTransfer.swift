// With CurlOptions.swift, the only file of the app that calls libcurl
// (through CCurl's loader): one easy handle per exchange (or one kept by an
// HTTPConnection for its exchanges), reset after each and freed with its
// header list on every path.
import CCurl

/// A libcurl easy handle, cleaned up (its connection closed) when released.
/// Between exchanges it holds no option: `CurlTransfer` resets it when it
/// ends, so nothing it keeps points at memory that is gone.
final class CurlHandle {
  let pointer: UnsafeMutableRawPointer

  init() throws(HTTPClientError) {
    // Loads libcurl and runs curl_global_init, once per process (pthread_once).
    if let reason = tasker_curl_load() {
      throw .transport(reason: "libcurl could not be loaded (\(String(cString: reason))); install Debian's libcurl4")
    }
    guard let pointer = tasker_curl_easy_init() else {
      throw .transport(reason: "libcurl could not make a handle (out of memory)")
    }
    self.pointer = pointer
  }

  deinit {
    tasker_curl_easy_cleanup(pointer)
  }
}

/// One exchange through a libcurl easy handle: the handle, the header list,
/// the error buffer and what the callbacks have received so far.
final class CurlTransfer {
  /// Kept alive by the transfer, so the handle is reset before it is freed.
  private let owner: CurlHandle
  let handle: UnsafeMutableRawPointer
  /// The header list built by `curl_slist_append` (copies of the caller's
  /// non-secret headers); the bearer node, if any, is put in front of it by
  /// `perform` and is not part of it.
  var headerList: UnsafeMutablePointer<curl_slist>?
  let errorBuffer: UnsafeMutablePointer<CChar>
  let limit: Int
  /// The final response's header fields (reset at each status line, so
  /// interim 1xx responses are dropped).
  private(set) var headers: [(name: String, value: String)] = []
  private(set) var body: [UInt8] = []
  private(set) var headerBytes = 0
  /// HTTP bytes written and read, as libcurl reports them to the debug
  /// callback (request head and body; response heads and body).
  private(set) var bytesSent = 0
  private(set) var bytesReceived = 0
  /// Why a callback stopped the transfer; wins over libcurl's own code.
  private(set) var refusal: HTTPClientError?
  /// Where a streamed exchange reads its body and puts a 2xx answer's.
  var streaming: HTTPStreaming?
  /// The bytes of a 2xx body handed to the stream.
  private(set) var streamedBytes = 0

  /// An exchange on `handle`, whose options are all reset first, so
  /// nothing set for an earlier exchange on a kept handle carries over.
  init(limit: Int, on handle: CurlHandle) {
    owner = handle
    self.handle = handle.pointer
    self.limit = limit
    errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    tasker_curl_easy_reset(self.handle)
  }

  deinit {
    // Every option back to its default before the memory the options point at (the error
    // buffer, this transfer as the callbacks' context) is freed: a kept handle, or its cleanup
    // closing the connection, then calls no callback of this transfer's.
    tasker_curl_easy_reset(handle)
    tasker_curl_slist_free_all(headerList)
    errorBuffer.deallocate()
  }

  /// Appends `line` (`Name: value`) to the header list (libcurl copies it).
  func appendHeader(_ line: String) throws(HTTPClientError) {
    guard let list = tasker_curl_slist_append(headerList, line) else {
      throw .transport(reason: "libcurl could not add a header (out of memory)")
    }
    headerList = list
  }

  /// Runs the exchange, with the bearer line (NUL-terminated, in memory the
  /// caller owns and wipes) as the first header when there is one.
  ///
  /// The node that points at the bearer line is made here rather than by
  /// `curl_slist_append`, which would `strdup` the token into memory
  /// `curl_slist_free_all` frees without wiping: libcurl reads the list in
  /// place while it writes the request and keeps no pointer to it after
  /// `curl_easy_perform` returns (the header option is cleared right
  /// after, and the handle reset or cleaned up before the caller's buffer
  /// is wiped).
  func perform(bearerLine: UnsafeMutablePointer<CChar>?) -> CURLcode {
    let context = Unmanaged.passUnretained(self).toOpaque()
    var bearerNode = curl_slist(data: bearerLine, next: headerList)
    return withUnsafeMutablePointer(to: &bearerNode) { node in
      let list = bearerLine == nil ? headerList : node
      let steps: [CURLcode] = [
        tasker_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list),
        tasker_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer),
        tasker_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, receiveBody),
        tasker_curl_set_pointer(handle, CURLOPT_WRITEDATA, context),
        tasker_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, receiveHeader),
        tasker_curl_set_callback(handle, CURLOPT_READFUNCTION, sendBody),
        tasker_curl_set_pointer(handle, CURLOPT_READDATA, context),
        tasker_curl_set_pointer(handle, CURLOPT_HEADERDATA, context),
        // The debug callback is the one place libcurl reports each block of
        // HTTP bytes it sends and receives; it only counts them (nothing is
        // printed: with a callback set, verbose mode writes nothing itself).
        tasker_curl_set_debug_callback(handle, countBytes),
        tasker_curl_set_pointer(handle, CURLOPT_DEBUGDATA, context),
        tasker_curl_set_long(handle, CURLOPT_VERBOSE, 1),
      ]
      if let failed = steps.first(where: { $0 != CURLE_OK }) { return failed }
      let result = tasker_curl_easy_perform(handle)
      // Nothing may point at the caller's bearer line once this returns.
      _ = tasker_curl_set_pointer(handle, CURLOPT_HTTPHEADER, nil)
      return result
    }
  }

  /// libcurl's error text for the last failure, or its generic text for
  /// `code` when the buffer is empty.
  func errorText(_ code: CURLcode) -> String {
    let buffered = String(cString: errorBuffer)
    return buffered.isEmpty ? String(cString: tasker_curl_easy_strerror(code)) : buffered
  }

  /// A `long` from `curl_easy_getinfo`, 0 when unavailable.
  func info(long info: CURLINFO) -> Int {
    var value = 0
    return tasker_curl_get_long(handle, info, &value) == CURLE_OK ? value : 0
  }

  /// A `curl_off_t` from `curl_easy_getinfo`, 0 when unavailable.
  func info(offset info: CURLINFO) -> Int {
    var value: curl_off_t = 0
    return tasker_curl_get_offset(handle, info, &value) == CURLE_OK ? Int(value) : 0
  }

  // MARK: - Callbacks

  fileprivate func count(_ type: curl_infotype, _ size: Int) {
    switch type {
    case CURLINFO_HEADER_OUT, CURLINFO_DATA_OUT: bytesSent += size
    case CURLINFO_HEADER_IN, CURLINFO_DATA_IN: bytesReceived += size
    default: break
    }
  }

  fileprivate func receive(body chunk: UnsafeRawBufferPointer) -> Bool {
    guard refusal == nil else { return false }
    if let download = streaming?.download, (200...299).contains(info(long: CURLINFO_RESPONSE_CODE)) {
      guard streamedBytes + chunk.count <= limit else {
        refusal = .responseTooLarge(limit: limit)
        return false
      }
      streamedBytes += chunk.count
      do {
        try download(chunk)
      } catch {
        refusal = .transport(reason: "the downloaded body could not be kept (\(error))")
        return false
      }
      return true
    }
    // A streamed exchange keeps only a short answer of another status in memory (for its message).
    let kept = streaming?.download == nil ? limit : min(limit, HTTPStreaming.keptErrorBodyBytes)
    guard headerBytes + body.count + chunk.count <= kept else {
      refusal = .responseTooLarge(limit: kept)
      return false
    }
    body.append(contentsOf: chunk)
    return true
  }

  /// Fills `buffer` with the next bytes of a streamed request body.
  ///
  /// - Returns: the count, 0 at the end, or nil to abort the transfer.
  fileprivate func send(body buffer: UnsafeMutableRawBufferPointer) -> Int? {
    guard refusal == nil, let upload = streaming?.upload else { return nil }
    do {
      return try upload(buffer)
    } catch {
      refusal = .transport(reason: "the body to send could not be read (\(error))")
      return nil
    }
  }

  fileprivate func receive(headerLine chunk: UnsafeRawBufferPointer) -> Bool {
    guard refusal == nil else { return false }
    headerBytes += chunk.count
    guard headerBytes + body.count <= limit else {
      refusal = .responseTooLarge(limit: limit)
      return false
    }
    var line = chunk[...]
    if line.last == 0x0A { line = line.dropLast() }
    if line.last == 0x0D { line = line.dropLast() }
    if line.isEmpty { return true }
    if line.starts(with: Array("HTTP/".utf8)) {
      headers = []
      return true
    }
    if let field = HeaderField(line: Array(line)) {
      headers.append((field.name, field.value))
      return true
    }
    refusal = .headerRefused(name: HeaderField.name(ofRefused: Array(line)))
    return false
  }
}

/// The body callback: returning less than it was given makes libcurl stop
/// with `CURLE_WRITE_ERROR`.
private let receiveBody: tasker_curl_data_callback = { bytes, size, count, context in
  guard let context else { return 0 }
  let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
  let chunk = UnsafeRawBufferPointer(start: bytes, count: size * count)
  return transfer.receive(body: chunk) ? size * count : 0
}

/// The read callback of a streamed upload; `CURL_READFUNC_ABORT` stops it.
private let sendBody: tasker_curl_data_callback = { bytes, size, count, context in
  guard let context, let bytes else { return 0x1000_0000 }
  let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
  let buffer = UnsafeMutableRawBufferPointer(start: bytes, count: size * count)
  return transfer.send(body: buffer).map { $0 } ?? 0x1000_0000
}

/// The header callback: one whole line (status line, field or the blank
/// line) per call.
private let receiveHeader: tasker_curl_data_callback = { bytes, size, count, context in
  guard let context else { return 0 }
  let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
  let chunk = UnsafeRawBufferPointer(start: bytes, count: size * count)
  return transfer.receive(headerLine: chunk) ? size * count : 0
}

/// The debug callback: counts HTTP bytes each way, reads none of them.
private let countBytes: tasker_curl_debug_callback = { _, type, _, size, context in
  guard let context else { return 0 }
  Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().count(type, size)
  return 0
}
