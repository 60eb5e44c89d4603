import { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { CLIENT_IP_HEADER, clientIp, clientKey, networkKey, socketClientIp } from "./client-ip";

function request(remoteAddress: string, forwardedFor?: string): IncomingMessage {
  const socket = new Socket();
  Object.defineProperty(socket, "remoteAddress", { value: remoteAddress });
  const req = new IncomingMessage(socket);
  if (forwardedFor !== undefined) req.headers["x-forwarded-for"] = forwardedFor;
  return req;
}

describe("client address", () => {
  it("is the socket's peer unless proxies are trusted, whatever X-Forwarded-For says", () => {
    expect(socketClientIp(request("198.51.100.7", "203.0.113.9"), 0)).toBe("198.51.100.7");
    expect(socketClientIp(request("::ffff:198.51.100.7"), 0)).toBe("198.51.100.7");
    expect(socketClientIp(request("2001:db8::1"), 0)).toBe("2001:db8::1");
  });

  it("with N trusted proxies, is the Nth X-Forwarded-For entry from the end", () => {
    // The client wrote 6.6.6.6 itself; the one proxy appended the address it saw.
    expect(socketClientIp(request("10.0.0.2", "6.6.6.6, 203.0.113.9"), 1)).toBe("203.0.113.9");
    expect(socketClientIp(request("10.0.0.3", "6.6.6.6, 203.0.113.9, 10.0.0.2"), 2)).toBe("203.0.113.9");
    // Fewer entries than hops: the furthest one there is; none or garbage: the peer.
    expect(socketClientIp(request("10.0.0.3", "203.0.113.9"), 2)).toBe("203.0.113.9");
    expect(socketClientIp(request("10.0.0.2"), 1)).toBe("10.0.0.2");
    expect(socketClientIp(request("10.0.0.2", "6.6.6.6, not-an-address"), 1)).toBe("10.0.0.2");
  });

  it("is read back from the header the server sets, or unknown without it", () => {
    expect(clientIp(new Headers({ [CLIENT_IP_HEADER]: "203.0.113.9" }))).toBe("203.0.113.9");
    expect(clientIp(new Headers())).toBe("unknown");
  });

  it("counts IPv6 clients by their /64 network and IPv4 clients by address", () => {
    expect(clientKey("203.0.113.9")).toBe("203.0.113.9");
    expect(clientKey("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64");
    expect(clientKey("2001:DB8:0:1:ffff:ffff:ffff:ffff")).toBe("2001:db8:0:1::/64");
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("1:2::3:4:5:1.2.3.4")).toBe("1:2:0:3::/64");
    expect(clientKey("unknown")).toBe("unknown");
  });

  it("belongs to a network: its IPv4 /24 or IPv6 /48", () => {
    expect(networkKey("203.0.113.9")).toBe("203.0.113.0/24");
    expect(networkKey("2001:db8:7:1::1")).toBe("2001:db8:7::/48");
    expect(networkKey("2001:DB8:7:ff00:1:2:3:4")).toBe("2001:db8:7::/48");
    expect(networkKey("2001:db8::1")).toBe("2001:db8:0::/48");
    expect(networkKey("::1")).toBe("0:0:0::/48");
    expect(networkKey("unknown")).toBe("unknown");
  });
});
