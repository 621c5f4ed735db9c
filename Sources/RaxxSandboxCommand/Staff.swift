import ArgumentParser
import Foundation
import RaxxCore
import RaxxDomain
import RaxxSandbox

extension RaxxSandboxTool {
    /// `raxx-sandbox staff grant|revoke`: the support staff flag that raxx-dsr needs.
    public struct Staff: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            abstract: "Grant or revoke an account's support staff flag.",
            discussion: """
                Staff run data-subject requests (raxx-dsr); everyone else gets 403 staff_only. The change \
                is audited (staff.granted, staff.revoked) and takes effect at the account's next request.
                """,
            subcommands: [Grant.self, Revoke.self]
        )

        public init() {}
    }
}

/// What grant and revoke share: the database and the account.
struct StaffOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The SQLite database file (the one serve --db uses).", valueName: "path"))
    var db: String

    @Option(help: ArgumentHelp("The account's email address.", valueName: "email"))
    var email: String

    mutating func validate() throws {
        do { email = try EmailAddress.normalized(email) } catch { throw ValidationError("--email \(error).") }
        guard db != ":memory:" else { throw ValidationError("Name the database file of a running or seeded sandbox.") }
    }

    func set(_ staff: Bool) throws {
        do {
            let database = try SandboxDatabase(path: db)
            guard try database.setStaff(email: email.lowercased(), staff: staff, actor: "raxx-sandbox staff") else {
                printError(
                    "raxx-sandbox: no account has the email \(email): "
                        + (staff
                            ? "register it first (raxx-auth register --email \(email)), then grant it staff."
                            : "there is no staff flag to take away."))
                throw ExitCode(ExitStatus.dataError.rawValue)
            }
            printError("raxx-sandbox: \(email) is \(staff ? "now" : "no longer") staff.")
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("raxx-sandbox: could not change the staff flag: \(error)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }
}

extension RaxxSandboxTool.Staff {
    public struct Grant: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(abstract: "Make an account support staff (audited).")
        @OptionGroup var options: StaffOptions
        public init() {}
        public func run() async throws { try options.set(true) }
    }

    public struct Revoke: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(abstract: "Take the support staff flag away (audited).")
        @OptionGroup var options: StaffOptions
        public init() {}
        public func run() async throws { try options.set(false) }
    }
}
