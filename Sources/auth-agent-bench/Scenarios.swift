/// Auth scenarios measured once the auth core exists.
enum Scenarios {
    static func runSign(report: Report, agentPath: String, selfPath: String, scale: Int, echoRate: Double, echoP50: Double, emptyStart: Double) {}
}
