#if canImport(Testing)
    import Testing
#endif

/// Fails the running test: a command touched a piece of the world its test did not plan for. (A
/// release build, which has no test library, builds this module without it; only tests use it.)
func recordUnplanned(_ message: String) {
    #if canImport(Testing)
        Issue.record(Comment(rawValue: message))
    #endif
}
