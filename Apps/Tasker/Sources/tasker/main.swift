import Foundation
import TaskerCLI

exit(TaskerMain.run(Array(CommandLine.arguments.dropFirst())))
