import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A real Apache httpd with mod_dav serving one WebDAV collection on
/// 127.0.0.1, over plain HTTP and (by default) over TLS with a certificate
/// from a test certificate authority made here with the `openssl` command
/// line. Basic authentication with one htpasswd line per user. Started in
/// the foreground as a child of the test and stopped when released, even
/// when the test fails.
///
/// Apache missing is an error, never a skip: CI installs `apache2`.
public final class WebDAVServer: @unchecked Sendable {
  /// Holds the configuration, logs, keys and the DAV root.
  public let directory: TemporaryDirectory
  /// The collection's name under the DAV root.
  public let collection: String
  /// The plain HTTP port.
  public let port: Int
  /// The TLS port, nil without TLS.
  public let tlsPort: Int?
  /// The test CA's certificate (PEM), nil without TLS.
  public let caFile: String?
  /// Apache's parent, leader of its own process group; 0 once stopped.
  private var processID: pid_t = 0

  /// `http://127.0.0.1:<port>/<collection>`.
  public var url: String { "http://127.0.0.1:\(port)/\(collection)" }
  /// `https://127.0.0.1:<tlsPort>/<collection>`.
  public var httpsURL: String {
    tlsPort.map { "https://127.0.0.1:\($0)/\(collection)" } ?? url
  }
  /// The directory on disk behind `url` (the collection): `tasker-sync/` is
  /// made in it by the first `sync setup`.
  public var storageRoot: String { directory.path("root/" + collection) }
  /// `storageRoot/tasker-sync`.
  public var syncRoot: String { storageRoot + "/tasker-sync" }
  /// Apache's error log.
  public var errorLog: String { directory.path("error.log") }

  static let modules = "/usr/lib/apache2/modules"

  /// Makes the server root, the users and (with `tls`) the CA and the
  /// server certificate, and starts Apache; waits until it answers.
  ///
  /// - Throws: `SetupFailure` when apache2, htpasswd or openssl is missing,
  ///   or Apache does not start.
  public init(users: [String: String], tls: Bool = true, collection: String = "dav") throws {
    let apache = Binary.which("apache2")
    guard FileManager.default.isExecutableFile(atPath: apache),
      FileManager.default.fileExists(atPath: Self.modules + "/mod_dav_fs.so")
    else {
      throw SetupFailure(
        "apache2 with mod_dav is not installed (apt-get install apache2): the WebDAV tests need a real server")
    }
    directory = try TemporaryDirectory()
    self.collection = collection
    let root = directory.path
    // Apache's children run as nobody: they must reach the DAV root, the lock
    // folder and the password file.
    chmod(root, 0o755)
    let asRoot = getuid() == 0
    for folder in ["root", "root/" + collection, "lock", "run"] {
      try FileManager.default.createDirectory(
        atPath: directory.path(folder), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
      if asRoot, folder != "run" { try Self.chownNobody(directory.path(folder)) }
    }
    for (user, password) in users.sorted(by: { $0.key < $1.key }) {
      try Self.htpasswd(directory.path("htpasswd"), user: user, password: password)
    }
    if users.isEmpty { FileManager.default.createFile(atPath: directory.path("htpasswd"), contents: Data()) }
    if tls {
      caFile = directory.path("tls/ca.pem")
      try Self.makeCertificates(in: directory.path("tls"))
    } else {
      caFile = nil
    }

    var lastError = ""
    for _ in 0..<5 {
      let httpPort = try Self.freePort()
      let securePort = tls ? try Self.freePort() : nil
      try Self.configuration(root: root, port: httpPort, tlsPort: securePort, user: asRoot)
        .write(toFile: directory.path("httpd.conf"), atomically: true, encoding: .utf8)
      let started = try Self.spawnGroup(
        apache, ["-f", directory.path("httpd.conf"), "-DFOREGROUND"], stderr: directory.path("stderr.log"))
      if Self.waitUntilAnswering(started, port: httpPort, also: securePort) {
        processID = started
        port = httpPort
        tlsPort = securePort
        return
      }
      Self.stop(started)
      lastError =
        ((try? String(contentsOfFile: directory.path("stderr.log"), encoding: .utf8)) ?? "")
        + ((try? String(contentsOfFile: directory.path("error.log"), encoding: .utf8)) ?? "")
    }
    throw SetupFailure("apache2 did not start: \(lastError)")
  }

  deinit {
    if processID > 0 { Self.stop(processID) }
  }

  /// Stops the server now (the tests of an unreachable server).
  public func stop() {
    if processID > 0 { Self.stop(processID) }
    processID = 0
  }

  /// Sets (or replaces) `user`'s password; Apache reads the file on every
  /// request.
  public func setPassword(user: String, password: String) throws {
    try Self.htpasswd(directory.path("htpasswd"), user: user, password: password)
  }

  // MARK: - Making it

  static func configuration(root: String, port: Int, tlsPort: Int?, user: Bool) -> String {
    var modules = [
      "mpm_event", "authz_core", "authz_user", "authn_core", "authn_file", "auth_basic", "dav", "dav_fs",
    ]
    if tlsPort != nil { modules += ["socache_shmcb", "ssl"] }
    var lines = [
      "ServerRoot \(root)", "ServerName 127.0.0.1", "Listen 127.0.0.1:\(port)",
    ]
    lines += modules.map { "LoadModule \($0)_module \(Self.modules)/mod_\($0).so" }
    if user { lines += ["User nobody", "Group nogroup"] }
    lines += [
      "DefaultRuntimeDir \(root)/run", "PidFile \(root)/httpd.pid", "ErrorLog \(root)/error.log",
      "LogLevel warn", "StartServers 1", "ServerLimit 2", "ThreadsPerChild 16", "MaxRequestWorkers 32",
      "DavLockDB \(root)/lock/DavLock", "DocumentRoot \(root)/root",
      "<Directory \(root)/root>", "  Dav On", "  AuthType Basic", "  AuthName \"dav\"",
      "  AuthUserFile \(root)/htpasswd", "  Require valid-user", "</Directory>",
    ]
    if let tlsPort {
      lines += [
        "Listen 127.0.0.1:\(tlsPort) https", "SSLSessionCache shmcb:\(root)/run/ssl_scache(512000)",
        "<VirtualHost 127.0.0.1:\(tlsPort)>", "  ServerName localhost", "  SSLEngine on",
        "  SSLCertificateFile \(root)/tls/server.pem", "  SSLCertificateKeyFile \(root)/tls/server.key",
        "</VirtualHost>",
      ]
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// A CA (key and self-signed certificate) and a server certificate for
  /// IP:127.0.0.1 and DNS:localhost signed by it, in `folder`.
  static func makeCertificates(in folder: String) throws {
    try FileManager.default.createDirectory(
      atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
    let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    try openssl(
      ["req", "-x509"] + curve + [
        "-days", "2", "-subj", "/CN=Tasker WebDAV Test CA", "-keyout", folder + "/ca.key", "-out", folder + "/ca.pem",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
      ])
    try openssl(
      ["req"] + curve + [
        "-subj", "/CN=localhost", "-keyout", folder + "/server.key", "-out", folder + "/server.csr",
      ])
    try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
      .write(toFile: folder + "/server.ext", atomically: true, encoding: .utf8)
    try openssl([
      "x509", "-req", "-in", folder + "/server.csr", "-CA", folder + "/ca.pem", "-CAkey", folder + "/ca.key",
      "-CAcreateserial", "-days", "2", "-extfile", folder + "/server.ext", "-out", folder + "/server.pem",
    ])
  }

  static func openssl(_ arguments: [String]) throws {
    let result = try Binary(path: Binary.which("openssl")).run(arguments)
    guard result.status == 0 else { throw SetupFailure("openssl \(arguments.first ?? ""): \(result.stderr)") }
  }

  static func htpasswd(_ file: String, user: String, password: String) throws {
    let create = FileManager.default.fileExists(atPath: file) ? [] : ["-c"]
    let result = try Binary(path: Binary.which("htpasswd")).run(create + ["-b", "-B", file, user, password])
    guard result.status == 0 else { throw SetupFailure("htpasswd: \(result.stderr)") }
    chmod(file, 0o644)
  }

  static func chownNobody(_ path: String) throws {
    guard let user = getpwnam("nobody"), let group = getgrnam("nogroup") else {
      throw SetupFailure("no user nobody or group nogroup")
    }
    guard chown(path, user.pointee.pw_uid, group.pointee.gr_gid) == 0 else { throw SetupFailure("chown \(path)") }
  }

  // MARK: - Ports and processes

  /// A port on 127.0.0.1 that was free a moment ago (bound to 0, released).
  public static func freePort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw SetupFailure("socket") }
    defer { close(socket) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
        guard bind(socket, pointer, length) == 0 else { return -1 }
        return getsockname(socket, pointer, &length)
      }
    }
    guard bound == 0 else { throw SetupFailure("bind") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    return address
  }

  /// Whether a TCP connection to 127.0.0.1:`port` is accepted; with
  /// `request`, sends it and returns the first bytes of the answer.
  public static func exchange(port: Int, request: String? = nil) -> String? {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return nil }
    defer { close(socket) }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = loopback(port: port)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { return nil }
    guard let request else { return "" }
    let bytes = Array(request.utf8)
    guard send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { return nil }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = recv(socket, &buffer, buffer.count, 0)
    return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
  }

  /// Starts `path` as the leader of a new process group, stdin and stdout
  /// on /dev/null and stderr appended to `stderr`. Apache's workers inherit
  /// the group, so `stop` reaches every one of them; Foundation's `Process`
  /// would wait for the workers to close an inherited descriptor.
  static func spawnGroup(_ path: String, _ arguments: [String], stderr: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attributes, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
    guard status == 0 else { throw SetupFailure("posix_spawn \(path): \(String(cString: strerror(status)))") }
    return pid
  }

  /// Whether `pid` has not exited; reaps it when it has.
  static func isRunning(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    return waitpid(pid, &status, WNOHANG) == 0
  }

  static func waitUntilAnswering(_ pid: pid_t, port: Int, also other: Int?) -> Bool {
    let deadline = Date().addingTimeInterval(15)
    while Date() < deadline, isRunning(pid) {
      let answer = exchange(port: port, request: "OPTIONS / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
      if answer?.hasPrefix("HTTP/1.") == true, other.map({ exchange(port: $0) != nil }) ?? true { return true }
      usleep(50_000)
    }
    return false
  }

  /// SIGTERM to the group, up to 10 s for the parent, then SIGKILL to the
  /// whole group (workers left behind included) and the parent reaped.
  static func stop(_ pid: pid_t) {
    kill(-pid, SIGTERM)
    let deadline = Date().addingTimeInterval(10)
    var exited = false
    while !exited, Date() < deadline {
      exited = !isRunning(pid)
      if !exited { usleep(20_000) }
    }
    kill(-pid, SIGKILL)
    if !exited {
      var status: Int32 = 0
      waitpid(pid, &status, 0)
    }
  }
}
