import Foundation

/// Whether an intervals.icu key works, asked before the account is kept: a refused key is not kept.
public enum IntervalsICUCheck {
    public enum Result: Equatable, Sendable {
        case accepted
        /// intervals.icu could not be reached or failed: the account is kept unchecked; the first upload tells.
        case unchecked(String)
    }

    public static func check(_ account: IntervalsAccount, transport: any HTTPTransport = NetworkTransport())
        async throws -> Result
    {
        let address: ServiceAddress
        do { address = try ServiceAddress(account.address) } catch { throw UploadError(error.description, .usage) }
        let request = ServiceRequest(
            .GET, "/api/v1/athlete/\(FormEncoding.escape(account.athlete))",
            headers: [("Authorization", IntervalsICU.authorization(account)), ("Accept", "application/json")])
        let response: ServiceResponse
        do {
            response = try await transport.send(request, to: address, deadlineSeconds: 30)
        } catch {
            return .unchecked(error.description)
        }
        switch response.status {
        case 200..<300: return .accepted
        case 401, 403:
            throw UploadError(
                "intervals.icu refused this API key for athlete \(account.athlete); copy it again from intervals.icu's "
                    + "Settings (Developer Settings)")
        case 404: throw UploadError("intervals.icu has no athlete \(account.athlete)")
        default: return .unchecked("intervals.icu answered \(response.status)")
        }
    }
}
