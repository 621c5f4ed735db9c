import Foundation
import PackagePlugin

/// Stamps the build with the commit it was built from: before each build, `Scripts/stamp-build`
/// writes `BuildStamp.swift` (the commit's short hash and date) for the target it serves, and
/// rewrites it only when the commit changed, so that an ordinary rebuild compiles nothing more.
@main
struct BuildStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Stamp")
        let script = context.package.directoryURL.appending(path: "Scripts/stamp-build")
        return [
            .prebuildCommand(
                displayName: "Stamping the build with its commit", executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path, context.package.directoryURL.path, output.path], outputFilesDirectory: output)
        ]
    }
}
