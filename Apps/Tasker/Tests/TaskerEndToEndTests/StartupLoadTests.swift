import Foundation
import TaskerTestSupport
import Testing

/// What starting `tasker` loads: libmicrohttpd and its TLS libraries only
/// for `tasker mcp --http`, never for the everyday commands.
@Suite("Start-up: tasker loads libmicrohttpd only to serve HTTP")
struct StartupLoadTests {
  /// The shared objects the dynamic loader reports opening (`LD_DEBUG=files`),
  /// dlopen included.
  static func loaded(by result: ProcessResult) -> [String] {
    result.stderr.split(separator: "\n").compactMap { line in
      guard let range = line.range(of: "file=") else { return nil }
      return String(line[range.upperBound...].prefix { $0 != " " && $0 != "\t" })
    }
  }

  @Test func everydayCommandsNeverLoadTheHTTPLibrary() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "Call the bank", "--notes", "-"], input: "account 1234").status == 0)
    var debug = device.environment
    debug["LD_DEBUG"] = "files"
    for arguments in [["--version"], ["show", "1"], ["list"], ["plan-context", "--json"]] {
      let result = try Binary.tasker.run(arguments, environment: debug)
      #expect(result.status == 0, "\(arguments): \(result.stderr.suffix(500))")
      let libraries = Self.loaded(by: result)
      #expect(libraries.contains { $0.hasPrefix("libc.so") }, "LD_DEBUG reported nothing: \(arguments)")
      for forbidden in ["libmicrohttpd", "libgnutls", "libnettle", "libp11-kit"] {
        #expect(!libraries.contains { $0.contains(forbidden) }, "\(arguments) loaded \(forbidden)")
      }
    }
  }

  @Test func servingHTTPLoadsItOnDemand() throws {
    let device = try TestDevice()
    var debug = device.environment
    debug["LD_DEBUG"] = "files"
    // 203.0.113.1 (TEST-NET-3) is no address of this machine: the library is
    // loaded, then binding fails and the command ends with its listen error.
    let result = try Binary.tasker.run(["mcp", "--http", "203.0.113.1:8765"], environment: debug)
    #expect(result.status == 69, "\(result.stderr.suffix(800))")
    #expect(result.stderr.contains("could not listen on 203.0.113.1:8765"), "\(result.stderr.suffix(800))")
    #expect(Self.loaded(by: result).contains { $0.hasPrefix("libmicrohttpd.so") }, "\(result.stderr.suffix(800))")
  }
}
