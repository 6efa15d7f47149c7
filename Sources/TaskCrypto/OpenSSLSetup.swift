import COpenSSL

/// OpenSSL, initialised once per process without reading the system's
/// openssl.cnf: TaskKey always uses OpenSSL's default provider, whatever
/// the machine's configuration says (SECURITY.md), and a short-lived
/// `taskkey` process does not pay for parsing the file.
private let openSSLInitialisation: Int32 = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_LOAD_CONFIG), nil)

/// Ensures OpenSSL is initialised as above. Stops the process if it cannot
/// be: no cipher or digest works without it.
@inline(__always)
func ensureOpenSSL() {
  precondition(openSSLInitialisation == 1, "OpenSSL could not be initialised")
}
