// The tapedeck executable: everything it does is the TapedeckCommands library's (the command
// tables, parsing, help, every sub-command), so tests and other programs reach the same code.
import TapedeckCommands
#if canImport(Glibc)
import Glibc
#endif

exit(runMain(CommandLine.arguments))
