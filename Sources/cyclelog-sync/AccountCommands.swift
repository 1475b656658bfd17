import ArgumentParser
import ExitStatus
import Formats
import Foundation
import RideSync
import RideUploads
import WorkoutStore

/// `cyclelog-sync account add|list|remove`: the training services rides are uploaded to.
struct Account: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Adds, lists or removes the intervals.icu and Strava accounts rides are uploaded to.",
        subcommands: [AccountAdd.self, AccountList.self, AccountEdit.self, AccountRemove.self])
}

struct AccountAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Adds an account (intervals.icu: an API key; Strava: its OAuth authorization).",
        subcommands: [AddIntervals.self, AddStrava.self])
}

extension Service: ExpressibleByArgument {}

/// Where the accounts are: `--accounts`, else `accounts/` beside the database.
struct AccountPlace: ParsableArguments {
    @Option(help: "The workout database (default: $CYCLELOG_DB, else $XDG_DATA_HOME/cyclelog/cyclelog.sqlite).")
    var db: String?

    @Option(help: "The folder of the accounts' files (default: accounts/ beside the database).")
    var accounts: String?

    var databasePath: String { db ?? WorkoutStore.defaultPath() }

    var folder: AccountFolder { AccountFolder(path: accounts ?? AccountFolder.beside(database: databasePath)) }

    func openLocal() throws -> WorkoutStore {
        do {
            return try WorkoutStore(path: databasePath, access: .write)
        } catch {
            throw SyncError(.local, error.description)
        }
    }
}

/// From when every sync uploads a new account's rides.
struct UploadsFrom: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Rides that started on or after this local day are uploaded by every sync (default: from now on).",
            valueName: "YYYY-MM-DD"))
    var since: String?

    /// From when every sync uploads: `--since`'s midnight, else now.
    func uploadsFrom() throws -> Int64 {
        guard let since else { return Int64(Date().timeIntervalSince1970 * 1_000_000) }
        guard since.count == 10, let start = Upload.localMidnight(since) else {
            throw ValidationError("--since takes a day as YYYY-MM-DD")
        }
        return start
    }
}

/// What a service's files are written without.
struct LeavingOut: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Data types its files are written without, comma-separated: hr, power, cadence, speed, energy (none: "
                + "everything is sent).", valueName: "types"))
    var without: String?

    func validate() throws {
        do throws(UploadError) {
            if let without { _ = try LeftOut.parse(without) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The account's list: nil when nothing is left out.
    func names() throws -> [String]? {
        guard let without else { return nil }
        let types = try LeftOut.parse(without)
        return types.isEmpty ? nil : types.sorted().map(\.rawValue)
    }
}

/// What each sync will upload, as `account add` says it.
func uploadsFromWords(_ since: String?) -> String {
    (since.map { "Rides that started on or after \($0)" } ?? "Rides that start from now on")
        + " are uploaded after each sync; others with `cyclelog-sync upload ID` or `--since DAY`."
}

struct AddIntervals: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "intervals",
        abstract: "Adds the intervals.icu account: the athlete id and the API key of its Settings page.")
    @OptionGroup var place: AccountPlace
    @OptionGroup var from: UploadsFrom
    @OptionGroup var leaving: LeavingOut

    @Option(help: "The athlete's id (Settings → Developer Settings, `i` and digits).")
    var athlete: String

    @Option(
        help: ArgumentHelp(
            "A file only you can read (chmod 600) whose first line is the API key, or - for standard input; never "
                + "the key itself on a command line."))
    var apiKeyFile: String

    @Option(help: "intervals.icu's address, for a stand-in or a proxy (plain http only on this machine).")
    var address = Service.intervals.defaultAddress

    func run() async throws {
        let key = try AccountFolder.secret(fromFile: apiKeyFile, what: "the API key file")
        var account = IntervalsAccount(
            athlete: athlete, apiKey: key, address: address, addedMicroseconds: try from.uploadsFrom())
        account.without = try leaving.names()
        let check = try await IntervalsICUCheck.check(account)
        if case .unchecked(let reason) = check {
            FileHandle.standardError.write(Data("cyclelog-sync: \(reason); the key is kept unchecked\n".utf8))
        }
        try place.folder.save(account)
        print(
            "intervals.icu account of athlete \(shown(athlete)) added (\(place.folder.file(.intervals))). "
                + (check == .accepted ? "intervals.icu took the key. " : "") + uploadsFromWords(from.since)
                + sentWithoutWords(account.without))
    }
}

struct AddStrava: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strava",
        abstract: "Authorizes cyclelog on Strava with your own API application (strava.com/settings/api).",
        discussion: """
            Prints the address of Strava's authorization page. Open it in a browser and approve: Strava sends the \
            browser back to this machine (127.0.0.1), where cyclelog-sync listens once. On a machine without a \
            browser, --paste prints the address and reads the address the browser ends on (or its code) from \
            standard input. The refresh token is kept in the account's file (0600), never in the database.
            """)
    @OptionGroup var place: AccountPlace
    @OptionGroup var from: UploadsFrom
    @OptionGroup var leaving: LeavingOut

    @Option(help: "Your Strava API application's Client ID.")
    var clientId: String

    @Option(
        help: ArgumentHelp(
            "A file only you can read (chmod 600) whose first line is the application's Client Secret, or - for "
                + "standard input (not with --paste)."))
    var clientSecretFile: String

    @Flag(help: "Reads the address the browser ended on (or the code in it) from standard input; listens nowhere.")
    var paste = false

    @Option(help: "The port listened on for the browser's return (0: any free port).")
    var port = 0

    @Option(help: ArgumentHelp("How long to wait for the approval.", valueName: "seconds"))
    var timeout = 300.0

    @Option(help: "Strava's address, for a stand-in or a proxy (plain http only on this machine).")
    var address = Service.strava.defaultAddress

    func validate() throws {
        if paste && clientSecretFile == "-" {
            throw ValidationError("--paste reads standard input: give the client secret in a file")
        }
    }

    func run() async throws {
        let secret = try AccountFolder.secret(fromFile: clientSecretFile, what: "the client secret file")
        let serviceAddress: ServiceAddress
        do { serviceAddress = try ServiceAddress(address) } catch { throw UploadError(error.description, .usage) }
        let state =
            String(UInt64.random(in: .min ... .max), radix: 36) + String(UInt64.random(in: .min ... .max), radix: 36)
        let code: String
        if paste {
            let redirect = "http://localhost/exchange_token"
            print("Open this address in a browser, approve, then paste the address the browser ends on:")
            print(
                StravaAuthorization.authorizeURL(
                    address: serviceAddress, clientId: clientId, redirect: redirect, state: state))
            guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty
            else {
                throw UploadError("no code was pasted")
            }
            code = try Self.code(pasted: line, state: state)
        } else {
            let listener: LoopbackRedirect
            do { listener = try LoopbackRedirect(port: port) } catch {
                throw UploadError(error.description, .cannotUse)
            }
            // Written straight to standard output, which may be a pipe (a script, a test): the address must reach
            // it before the wait, not sit in a buffer.
            let url = StravaAuthorization.authorizeURL(
                address: serviceAddress, clientId: clientId, redirect: listener.redirectURI, state: state)
            FileHandle.standardOutput.write(
                Data("Open this address in a browser on this machine and approve cyclelog:\n\(url)\n".utf8))
            do {
                code = try listener.code(state: state, timeoutSeconds: timeout)
            } catch {
                throw UploadError(error.description)
            }
        }
        let tokens = try await StravaAuthorization.tokens(
            address: serviceAddress, clientId: clientId, clientSecret: secret, grant: ("authorization_code", code))
        if let scope = tokens.scope, !scope.contains("activity:write") {
            throw UploadError(
                "Strava's authorization lacks the permission to upload activities (granted: \(shown(scope))); add the "
                    + "account again and leave \"Upload your activities\" ticked")
        }
        var account = StravaAccount(
            clientId: clientId, clientSecret: secret, refreshToken: tokens.refreshToken,
            accessToken: tokens.accessToken, expiresAt: tokens.expiresAt, athlete: tokens.athlete, address: address,
            addedMicroseconds: try from.uploadsFrom())
        account.without = try leaving.names()
        try place.folder.save(account)
        print(
            "Strava account\(tokens.athlete.map { " of athlete \($0)" } ?? "") added (\(place.folder.file(.strava))). "
                + uploadsFromWords(from.since) + sentWithoutWords(account.without))
    }

    /// The code from what the rider pasted: the whole address (whose `state` must be ours) or the code alone.
    static func code(pasted: String, state: String) throws -> String {
        guard pasted.contains("code=") else { return pasted }
        let query = pasted.split(separator: "?", maxSplits: 1).dropFirst().first ?? Substring(pasted)
        let fields = Dictionary(FormEncoding.decode(query), uniquingKeysWith: { first, _ in first })
        guard fields["state"] == nil || fields["state"] == state else {
            throw UploadError("the pasted address is not the answer to this authorization (its state differs)")
        }
        guard let code = fields["code"], !code.isEmpty else { throw UploadError("the pasted address has no code") }
        return code
    }
}

struct AccountList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Lists the accounts (never their keys or tokens).")
    @OptionGroup var place: AccountPlace

    func run() async throws {
        let folder = place.folder
        var any = false
        if let account = try folder.intervals() {
            any = true
            print(
                "intervals: athlete \(shown(account.athlete)) at \(shown(account.address)), added "
                    + UTCTime.formatSeconds(microseconds: account.addedMicroseconds) + listedWithout(account.without))
        }
        if let account = try folder.strava() {
            any = true
            print(
                "strava: athlete \(shown(account.athlete ?? "?")) with application \(shown(account.clientId)) at "
                    + "\(shown(account.address)), added "
                    + UTCTime.formatSeconds(microseconds: account.addedMicroseconds) + listedWithout(account.without))
        }
        if !any { print("No accounts (\(folder.path)).") }
    }
}

/// ", files without hr" in `account list`; empty when nothing is left out.
func listedWithout(_ names: [String]?) -> String {
    let words = LeftOut.words(names)
    return words.isEmpty ? "" : ", files " + words
}

/// What `account add` and `account edit` say of the types left out.
func sentWithoutWords(_ names: [String]?) -> String {
    let words = LeftOut.words(names)
    return words.isEmpty ? "" : " Its files are sent " + words + "."
}

/// `cyclelog-sync account edit SERVICE --without TYPES`: what a service's files are written without, changed
/// without authorizing again. Rides already uploaded stay as they were sent.
struct AccountEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Changes what an account's files are written without (--without hr; none sends everything).")
    @OptionGroup var place: AccountPlace
    @OptionGroup var leaving: LeavingOut

    @Argument(help: "intervals or strava.")
    var service: Service

    func validate() throws {
        guard leaving.without != nil else {
            throw ValidationError("say what to change: --without hr, or --without none")
        }
    }

    func run() async throws {
        let folder = place.folder
        let names = try leaving.names()
        switch service {
        case .intervals:
            guard var account = try folder.intervals() else {
                throw UploadError("there is no intervals.icu account here")
            }
            account.without = names
            try folder.save(account)
        case .strava:
            guard var account = try folder.strava() else { throw UploadError("there is no Strava account here") }
            account.without = names
            try folder.save(account)
        }
        let words = LeftOut.words(names)
        print(
            "\(service.title): rides uploaded from now on are sent \(words.isEmpty ? "whole" : words); those already "
                + "uploaded stay as they were sent.")
    }
}

struct AccountRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Forgets an account here; what was uploaded stays on the service.")
    @OptionGroup var place: AccountPlace

    @Argument(help: "intervals or strava.")
    var service: Service

    func run() async throws {
        guard try place.folder.remove(service) else {
            throw UploadError("there is no \(service.title) account here")
        }
        switch service {
        case .intervals:
            print("The intervals.icu account is removed here. Revoke the key itself in intervals.icu's Settings.")
        case .strava:
            print(
                "The Strava account is removed here. Revoke cyclelog's access itself on "
                    + "https://www.strava.com/settings/apps.")
        }
    }
}
