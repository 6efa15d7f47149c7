import CTaskSystem
import Glibc

/// A point on the monotonic clock by which a network operation must end.
public struct NetworkDeadline: Sendable, Comparable {
  let instant: ContinuousClock.Instant

  /// The deadline `seconds` from now.
  public static func after(seconds: Double) -> NetworkDeadline {
    NetworkDeadline(instant: .now.advanced(by: .milliseconds(Int64(seconds * 1000))))
  }

  /// Whichever of two deadlines comes first.
  public func earlier(_ other: NetworkDeadline) -> NetworkDeadline { min(self, other) }

  /// Milliseconds left, at least 0, for poll(2).
  var millisecondsLeft: Int32 {
    let left = ContinuousClock.now.duration(to: instant)
    guard left > .zero else { return 0 }
    let (seconds, attoseconds) = left.components
    return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
  }

  /// Orders deadlines by time.
  public static func < (lhs: NetworkDeadline, rhs: NetworkDeadline) -> Bool { lhs.instant < rhs.instant }
}

/// Waits until `descriptor` is ready for `events` or the deadline passes.
func waitReady(_ descriptor: Int32, events: Int16, deadline: NetworkDeadline, operation: String, peer: String)
  throws
{
  while true {
    var entry = pollfd(fd: descriptor, events: events, revents: 0)
    let left = deadline.millisecondsLeft
    let result = poll(&entry, 1, left)
    if result > 0 { return }
    if result == 0 { throw SystemError.timedOut(operation: operation, peer: peer) }
    if errno != EINTR { throw SystemError.failed(call: "poll", path: peer, errno: errno) }
  }
}

/// One TCP connection, non-blocking underneath, where every read and write
/// has a deadline: a peer that sends too little or too slowly ends in
/// `SystemError.timedOut`, never a hang. Closed on `close()` or when the
/// last reference goes.
public final class TCPConnection {
  private var descriptor: Int32
  /// This end's address.
  public let localAddress: SocketAddress
  /// The other end's address.
  public let peerAddress: SocketAddress

  init(descriptor: Int32) throws {
    self.descriptor = descriptor
    var one: Int32 = 1
    _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    localAddress = try Self.name(descriptor, peer: false)
    peerAddress = try Self.name(descriptor, peer: true)
  }

  deinit { close() }

  /// Connects to `address` before `deadline`.
  ///
  /// - Throws: `SystemError.timedOut` (operation `connect`), `.failed`
  ///   with the call `connect` (refused, unreachable).
  public static func connect(to address: SocketAddress, deadline: NetworkDeadline) throws -> TCPConnection {
    let peer = address.description
    let descriptor = socket(
      address.isIPv6 ? AF_INET6 : AF_INET,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard descriptor >= 0 else { throw SystemError.failed(call: "socket", path: peer, errno: errno) }
    var owned = true
    defer { if owned { Glibc.close(descriptor) } }
    let started = address.withSockaddr { Glibc.connect(descriptor, $0, $1) }
    if started != 0 {
      guard errno == EINPROGRESS else { throw SystemError.failed(call: "connect", path: peer, errno: errno) }
      try waitReady(descriptor, events: Int16(POLLOUT), deadline: deadline, operation: "connect", peer: peer)
      var failure: Int32 = 0
      var size = socklen_t(MemoryLayout<Int32>.size)
      getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &size)
      guard failure == 0 else { throw SystemError.failed(call: "connect", path: peer, errno: failure) }
    }
    let connection = try TCPConnection(descriptor: descriptor)
    owned = false
    return connection
  }

  /// Sends every byte of `bytes` before `deadline`.
  ///
  /// - Throws: `SystemError.timedOut` (operation `send`), `.failed` with
  ///   the call `send` (the peer reset the connection: EPIPE, ECONNRESET).
  public func send(_ bytes: UnsafeRawBufferPointer, deadline: NetworkDeadline) throws {
    var sent = 0
    while sent < bytes.count {
      let result = Glibc.send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
      if result > 0 {
        sent += result
        continue
      }
      guard result < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
        throw SystemError.failed(call: "send", path: peerAddress.description, errno: errno)
      }
      if errno == EINTR { continue }
      try waitReady(
        descriptor, events: Int16(POLLOUT), deadline: deadline, operation: "send", peer: peerAddress.description)
    }
  }

  /// Sends `bytes` before `deadline` (`send(_:deadline:)`).
  public func send(_ bytes: [UInt8], deadline: NetworkDeadline) throws {
    try bytes.withUnsafeBytes { try send($0, deadline: deadline) }
  }

  /// Fills `buffer` exactly, before `deadline`.
  ///
  /// - Throws: `SystemError.connectionClosed` when the peer closes first,
  ///   `.timedOut` (operation `receive`), `.failed` with the call `recv`.
  public func receive(into buffer: UnsafeMutableRawBufferPointer, deadline: NetworkDeadline) throws {
    var filled = 0
    while filled < buffer.count {
      let result = recv(descriptor, buffer.baseAddress! + filled, buffer.count - filled, 0)
      if result > 0 {
        filled += result
        continue
      }
      if result == 0 { throw SystemError.connectionClosed(peer: peerAddress.description) }
      guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
        throw SystemError.failed(call: "recv", path: peerAddress.description, errno: errno)
      }
      if errno == EINTR { continue }
      try waitReady(
        descriptor, events: Int16(POLLIN), deadline: deadline, operation: "receive", peer: peerAddress.description)
    }
  }

  /// Receives exactly `count` bytes before `deadline`
  /// (`receive(into:deadline:)`).
  public func receive(count: Int, deadline: NetworkDeadline) throws -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    try bytes.withUnsafeMutableBytes { try receive(into: $0, deadline: deadline) }
    return bytes
  }

  /// Whether the peer has closed its side or sent more bytes, without
  /// waiting: after the last message a well-behaved peer sends nothing.
  public func peerSentMoreOrClosed() -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) > 0
  }

  /// Closes the connection (idempotent).
  public func close() {
    guard descriptor >= 0 else { return }
    Glibc.close(descriptor)
    descriptor = -1
  }

  private static func name(_ descriptor: Int32, peer: Bool) throws -> SocketAddress {
    var storage = sockaddr_storage()
    var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let result = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        peer ? getpeername(descriptor, $0, &size) : getsockname(descriptor, $0, &size)
      }
    }
    guard result == 0, let address = SocketAddress(storage: storage) else {
      throw SystemError.failed(call: peer ? "getpeername" : "getsockname", path: "", errno: errno)
    }
    return address
  }
}

/// Listening TCP sockets on one or more addresses that hand out one
/// connection at a time, each `accept` with a deadline. Closed on
/// `close()` or when the last reference goes: a closed listener refuses
/// every later connection at the kernel.
public final class TCPListener {
  private var descriptors: [Int32] = []
  /// The addresses listened on, with the ports the kernel chose for port 0.
  public private(set) var addresses: [SocketAddress] = []

  /// Listens on every address in `addresses` (port 0: a free port, the
  /// same one for every address when the kernel allows it).
  ///
  /// - Parameter skippingUnavailable: skip an address the kernel cannot
  ///   bind now (EADDRNOTAVAIL: an IPv6 address still tentative, one just
  ///   removed) instead of failing, as long as one address is bound.
  /// - Throws: `SystemError.failed` with the call `bind` or `listen`
  ///   (address in use, not this machine's); nothing stays open.
  public init(addresses: [SocketAddress], skippingUnavailable: Bool = false) throws {
    var port: UInt16 = 0
    var skipped: SystemError?
    do {
      for requested in addresses {
        let address = requested.port == 0 && port != 0 ? requested.with(port: port) : requested
        let descriptor = socket(
          address.isIPv6 ? AF_INET6 : AF_INET,
          Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw SystemError.failed(call: "socket", path: "\(address)", errno: errno) }
        descriptors.append(descriptor)
        var one: Int32 = 1
        if address.isIPv6 {
          setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard address.withSockaddr({ bind(descriptor, $0, $1) }) == 0 else {
          let failure = SystemError.failed(call: "bind", path: "\(address)", errno: errno)
          guard skippingUnavailable, errno == EADDRNOTAVAIL else { throw failure }
          Glibc.close(descriptors.removeLast())
          skipped = failure
          continue
        }
        guard listen(descriptor, 1) == 0 else {
          throw SystemError.failed(call: "listen", path: "\(address)", errno: errno)
        }
        let bound = try TCPConnection.boundAddress(descriptor)
        if port == 0 { port = bound.port }
        self.addresses.append(bound)
      }
      if self.addresses.isEmpty, let skipped { throw skipped }
    } catch {
      close()
      throw error
    }
  }

  deinit { close() }

  /// Waits for one connection on any address before `deadline`.
  ///
  /// - Throws: `SystemError.timedOut` (operation `waiting for a peer`),
  ///   `.failed` with the call `accept`.
  public func accept(deadline: NetworkDeadline) throws -> TCPConnection {
    while true {
      var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      let result = poll(&entries, nfds_t(entries.count), deadline.millisecondsLeft)
      if result == 0 { throw SystemError.timedOut(operation: "waiting for a peer", peer: "") }
      if result < 0 {
        if errno == EINTR { continue }
        throw SystemError.failed(call: "poll", path: "", errno: errno)
      }
      for entry in entries where entry.revents != 0 {
        let accepted = task_system_accept_nonblocking(entry.fd)
        if accepted >= 0 { return try TCPConnection(descriptor: accepted) }
        guard [EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED].contains(errno) else {
          throw SystemError.failed(call: "accept", path: "", errno: errno)
        }
      }
    }
  }

  /// Stops listening on every address (idempotent).
  public func close() {
    for descriptor in descriptors { Glibc.close(descriptor) }
    descriptors = []
  }
}

extension TCPConnection {
  /// The address a listening socket is bound to.
  static func boundAddress(_ descriptor: Int32) throws -> SocketAddress {
    try name(descriptor, peer: false)
  }
}
