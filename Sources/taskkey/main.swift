import Foundation
import TaskKeyCLI
import TaskSystem

// The whole command lives in TaskKeyCLI; this is only the process edge.
// First, before anything is read: a crash prints nothing and ends the
// process (no Swift backtrace with memory contents, no core file), and
// nothing can attach to it, whichever command runs and whatever key it holds.
do {
  try ProcessHardening.disableCoreDumps()
  try ProcessHardening.endOnFatalSignals()
} catch {
  try? FileDescriptor.standardError.write(Array("taskkey: error: cannot harden the process: \(error)\n".utf8))
  exit(71)
}

/// The bytes of a C string, exactly as the kernel passed them.
func bytes(_ pointer: UnsafePointer<CChar>) -> [UInt8] {
  Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
}

let arguments = (1..<Int(CommandLine.argc)).map { bytes(CommandLine.unsafeArgv[$0]!) }
var environment = [[UInt8]]()
var entry = environ
while let variable = entry.pointee {
  environment.append(bytes(variable))
  entry += 1
}
exit(
  TaskKeyMain.run(argumentBytes: arguments, environmentBytes: environment) {
    StandardStreams.process(environment: $0)
  })
