import CSodium

/// libsodium must be initialised once before any other call; `sodium_init`
/// is idempotent and thread safe, and a global `let` runs it exactly once.
private let sodiumInitialisation: Int32 = sodium_init()

/// Ensures libsodium is initialised. Stops the process if it cannot be: every
/// secret allocation and every random byte depends on it, so there is no
/// safe way to go on.
@inline(__always)
func ensureSodium() {
  precondition(sodiumInitialisation >= 0, "libsodium could not be initialised")
}
