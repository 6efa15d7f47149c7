import Foundation
import Glibc
import Testing

@testable import TaskSystem

/// Addresses are literals only and print canonically; every read and
/// write on a connection ends by its deadline; a closed listener refuses
/// at the kernel. Everything runs on 127.0.0.1 and ::1.
@Suite("TaskSystem TCP")
struct TCPConnectionTests {
  @Test(arguments: [
    ("127.0.0.1:8080", "127.0.0.1:8080"), ("[::1]:0", "[::1]:0"), ("[0:0:0:0:0:0:0:1]:65535", "[::1]:65535"),
    ("[FE80::A]:7", "[fe80::a]:7"),
  ])
  func addressesParseToTheirCanonicalText(text: String, canonical: String) throws {
    #expect(try SocketAddress(parsing: text).description == canonical)
  }

  @Test(arguments: [
    "localhost:80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:08", "::1:80", "[::1]80",
    "[127.0.0.1]:80", "1.2.3.4:-1", "[::1%nosuchif0]:80", " 127.0.0.1:80", "192.168.001.2:1", "[::1]:",
  ])
  func nonLiteralsAndBadPortsAreRefused(text: String) {
    #expect {
      try SocketAddress(parsing: text)
    } throws: { error in
      guard case .invalidAddress(let named, _) = error as? SystemError else { return false }
      return named == text
    }
  }

  @Test func localNetworkRangesAreClassified() throws {
    for text in [
      "10.1.2.3:1", "172.16.0.1:1", "172.31.255.1:1", "192.168.0.1:1", "169.254.1.1:1", "[fd00::1]:1",
      "[fe80::1]:1", "100.64.0.1:1",
    ] {
      #expect(try SocketAddress(parsing: text).isLocalNetwork, "\(text)")
    }
    for text in ["127.0.0.1:1", "8.8.8.8:1", "172.32.0.1:1", "[::1]:1", "[2001:db8::1]:1", "100.128.0.1:1"] {
      #expect(try !SocketAddress(parsing: text).isLocalNetwork, "\(text)")
    }
    for address in try SocketAddress.localNetwork(port: 9) {
      #expect(address.isLocalNetwork && address.port == 9)
    }
  }

  @Test(arguments: ["127.0.0.1:0", "[::1]:0"])
  func bytesTravelBothWaysAndBothEndsAgreeOnAddresses(listen: String) throws {
    let listener = try TCPListener(addresses: [try SocketAddress(parsing: listen)])
    let address = try #require(listener.addresses.first)
    #expect(address.port != 0)
    let deadline = NetworkDeadline.after(seconds: 5)
    let client = try TCPConnection.connect(to: address, deadline: deadline)
    let server = try listener.accept(deadline: deadline)
    #expect(client.peerAddress == server.localAddress)
    #expect(client.localAddress == server.peerAddress)
    let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    // Larger than the socket buffers: the send must wait for the reader, so it runs on its own thread.
    let sender = Thread { try? client.send(payload, deadline: deadline) }
    sender.start()
    #expect(try server.receive(count: payload.count, deadline: deadline) == payload)
    try server.send([1, 2, 3], deadline: deadline)
    #expect(try client.receive(count: 3, deadline: deadline) == [1, 2, 3])
  }

  @Test func aSilentPeerEndsInATimeoutAndAClosedOneInConnectionClosed() throws {
    let listener = try TCPListener(addresses: [try SocketAddress(parsing: "127.0.0.1:0")])
    let client = try TCPConnection.connect(to: listener.addresses[0], deadline: .after(seconds: 5))
    let server = try listener.accept(deadline: .after(seconds: 5))
    let started = ContinuousClock.now
    #expect {
      try server.receive(count: 1, deadline: .after(seconds: 0.2))
    } throws: { error in
      guard case .timedOut("receive", _) = error as? SystemError else { return false }
      return true
    }
    #expect(ContinuousClock.now - started < .seconds(3))
    try client.send([9], deadline: .after(seconds: 1))
    client.close()
    #expect {
      try server.receive(count: 2, deadline: .after(seconds: 5))
    } throws: { error in
      guard case .connectionClosed = error as? SystemError else { return false }
      return true
    }
  }

  @Test func acceptWaitsNoLongerThanItsDeadlineAndAClosedListenerRefuses() throws {
    let listener = try TCPListener(addresses: [try SocketAddress(parsing: "127.0.0.1:0")])
    let address = listener.addresses[0]
    #expect {
      try listener.accept(deadline: .after(seconds: 0.1))
    } throws: { error in
      guard case .timedOut = error as? SystemError else { return false }
      return true
    }
    listener.close()
    #expect {
      try TCPConnection.connect(to: address, deadline: .after(seconds: 5))
    } throws: { error in
      guard case .failed("connect", _, ECONNREFUSED) = error as? SystemError else { return false }
      return true
    }
  }

  @Test func listeningTwiceOnOneAddressFailsAndLeavesNothingOpen() throws {
    let first = try TCPListener(addresses: [try SocketAddress(parsing: "127.0.0.1:0")])
    #expect {
      try TCPListener(addresses: [try SocketAddress(parsing: "[::1]:0"), first.addresses[0]])
    } throws: { error in
      guard case .failed("bind", _, EADDRINUSE) = error as? SystemError else { return false }
      return true
    }
  }
}

extension TCPConnectionTests {
  @Test func anAddressTheKernelCannotBindIsSkippedOnlyWhenAsked() throws {
    // 192.0.2.1 (TEST-NET-1) is no interface's address here: EADDRNOTAVAIL.
    let absent = try SocketAddress(parsing: "192.0.2.1:0")
    let loopback = try SocketAddress(parsing: "127.0.0.1:0")
    #expect {
      try TCPListener(addresses: [absent, loopback])
    } throws: { error in
      guard case .failed("bind", _, EADDRNOTAVAIL) = error as? SystemError else { return false }
      return true
    }
    let listener = try TCPListener(addresses: [absent, loopback], skippingUnavailable: true)
    #expect(listener.addresses.map(\.host) == ["127.0.0.1"])
    #expect(throws: SystemError.self) { try TCPListener(addresses: [absent], skippingUnavailable: true) }
  }
}
