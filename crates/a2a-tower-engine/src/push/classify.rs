//! [`AddressClass`] and [`classify`]: why an IP address is not a public
//! unicast address a webhook may be delivered to, after the IANA IPv4 and
//! IPv6 special-purpose address registries.
//!
//! IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:0:0/96`,
//! IPv4-compatible `::/96`, IPv4-translated `::ffff:0:0:0/96`, NAT64
//! `64:ff9b::/96` and 6to4 `2002::/16`) are judged by the IPv4 address they
//! reach. Any other IPv6 address outside global unicast `2000::/3` is
//! reserved.
//!
//! ```
//! use a2a_tower::push::{classify, AddressClass};
//! assert_eq!(classify("127.0.0.1".parse().unwrap()), Some(AddressClass::Loopback));
//! assert_eq!(classify("::ffff:10.0.0.1".parse().unwrap()), Some(AddressClass::Private));
//! assert_eq!(classify("64:ff9b::a9fe:a9fe".parse().unwrap()), Some(AddressClass::LinkLocal));
//! assert_eq!(classify("93.184.215.14".parse().unwrap()), None); // public
//! ```

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not public; the [`WebhookGuard`](super::WebhookGuard)
/// refuses every class unless an allowed network contains the address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// `0.0.0.0`, `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`.
    Private,
    /// `169.254.0.0/16` (cloud metadata lives here), `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`, and the deprecated site-local `fec0::/10`.
    UniqueLocal,
    /// Carrier-grade NAT, `100.64.0.0/10` (RFC 6598).
    SharedAddressSpace,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`,
    /// `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Any other special-purpose or unallocated range: `0.0.0.0/8`,
    /// `192.0.0.0/24` (but the anycast `192.0.0.9` and `192.0.0.10`),
    /// `192.88.99.0/24`, `240.0.0.0/4`, `100::/64`, `2001::/23`,
    /// `64:ff9b:1::/48`, `5f00::/16`, the IPv4-compatible form of a public
    /// address, and IPv6 outside `2000::/3`.
    Reserved,
}

impl AddressClass {
    /// A short lower-case name (`"loopback"`, `"private"`, …), for messages
    /// and trace fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unspecified => "unspecified",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::UniqueLocal => "unique-local",
            Self::SharedAddressSpace => "shared address space",
            Self::Documentation => "documentation",
            Self::Benchmarking => "benchmarking",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The class of `ip` when it is not a public unicast address; `None` when it
/// is public.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// `(network, prefix length, class)`, checked in order.
const V4: &[(u32, u8, AddressClass)] = {
    use AddressClass::*;
    &[
        (0x0000_0000, 32, Unspecified),        // 0.0.0.0
        (0x0000_0000, 8, Reserved),            // 0.0.0.0/8 "this network"
        (0x0a00_0000, 8, Private),             // 10.0.0.0/8
        (0x6440_0000, 10, SharedAddressSpace), // 100.64.0.0/10
        (0x7f00_0000, 8, Loopback),            // 127.0.0.0/8
        (0xa9fe_0000, 16, LinkLocal),          // 169.254.0.0/16
        (0xac10_0000, 12, Private),            // 172.16.0.0/12
        (0xc000_0000, 24, Reserved),           // 192.0.0.0/24 IETF protocol assignments
        (0xc000_0200, 24, Documentation),      // 192.0.2.0/24
        (0xc058_6300, 24, Reserved),           // 192.88.99.0/24 6to4 relay anycast
        (0xc0a8_0000, 16, Private),            // 192.168.0.0/16
        (0xc612_0000, 15, Benchmarking),       // 198.18.0.0/15
        (0xc633_6400, 24, Documentation),      // 198.51.100.0/24
        (0xcb00_7100, 24, Documentation),      // 203.0.113.0/24
        (0xe000_0000, 4, Multicast),           // 224.0.0.0/4
        (0xffff_ffff, 32, Broadcast),          // 255.255.255.255
        (0xf000_0000, 4, Reserved),            // 240.0.0.0/4
    ]
};

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let bits = ip.to_bits();
    // The two globally reachable anycast addresses inside 192.0.0.0/24.
    if bits == 0xc000_0009 || bits == 0xc000_000a {
        return None;
    }
    V4.iter()
        .find(|(net, len, _)| bits & (u32::MAX << (32 - len)) == *net)
        .map(|&(.., class)| class)
}

/// `(network, prefix length, class)` of the IPv6 ranges without an embedded
/// IPv4 address, checked in order before the `2000::/3` rule.
const V6: &[(u128, u8, AddressClass)] = {
    use AddressClass::*;
    &[
        (0, 128, Unspecified),                  // ::
        (1, 128, Loopback),                     // ::1
        (0x0064_ff9b_0001 << 80, 48, Reserved), // 64:ff9b:1::/48 local NAT64
        (0x0100 << 112, 64, Reserved),          // 100::/64 discard-only
        (0x2001_0002 << 96, 48, Benchmarking),  // 2001:2::/48
        (0x2001_0db8 << 96, 32, Documentation), // 2001:db8::/32
        (0x2001 << 112, 23, Reserved),          // 2001::/23 IETF protocol assignments
        (0x3fff << 112, 20, Documentation),     // 3fff::/20
        (0x5f00 << 112, 16, Reserved),          // 5f00::/16 SRv6 SIDs
        (0xfc00 << 112, 7, UniqueLocal),        // fc00::/7
        (0xfe80 << 112, 10, LinkLocal),         // fe80::/10
        (0xfec0 << 112, 10, UniqueLocal),       // fec0::/10 site-local
        (0xff00 << 112, 8, Multicast),          // ff00::/8
    ]
};

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    let bits = ip.to_bits();
    if let Some(class) = V6
        .iter()
        .find(|(net, len, _)| bits & (u128::MAX << (128 - len)) == *net)
        .map(|&(.., class)| class)
    {
        return Some(class);
    }
    let low32 = Ipv4Addr::from_bits(bits as u32);
    let top96 = bits >> 32;
    match top96 {
        // IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, NAT64
        // 64:ff9b::a.b.c.d: they reach the IPv4 address.
        0xffff | 0xffff_0000 | 0x0064_ff9b_0000_0000_0000_0000 => classify_v4(low32),
        // IPv4-compatible ::a.b.c.d (deprecated): never a public form.
        0 => Some(classify_v4(low32).unwrap_or(AddressClass::Reserved)),
        _ if bits >> 112 == 0x2002 => classify_v4(Ipv4Addr::from_bits((bits >> 80) as u32)),
        _ if bits >> 125 != 0b001 => Some(AddressClass::Reserved),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::AddressClass::*;
    use super::*;

    fn class(s: &str) -> Option<AddressClass> {
        classify(s.parse().unwrap())
    }

    #[test]
    fn ipv4_classes() {
        let cases = [
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Reserved)),
            ("10.0.0.0", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("100.63.255.255", None),
            ("100.64.0.1", Some(SharedAddressSpace)),
            ("100.127.255.255", Some(SharedAddressSpace)),
            ("100.128.0.0", None),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("169.254.169.254", Some(LinkLocal)),
            ("172.15.255.255", None),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.32.0.0", None),
            ("192.0.0.1", Some(Reserved)),
            ("192.0.0.9", None),
            ("192.0.0.10", None),
            ("192.0.2.1", Some(Documentation)),
            ("192.88.99.1", Some(Reserved)),
            ("192.167.255.255", None),
            ("192.168.1.1", Some(Private)),
            ("192.169.0.0", None),
            ("198.17.255.255", None),
            ("198.18.0.1", Some(Benchmarking)),
            ("198.19.255.255", Some(Benchmarking)),
            ("198.20.0.0", None),
            ("198.51.100.7", Some(Documentation)),
            ("203.0.113.9", Some(Documentation)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.255", Some(Multicast)),
            ("240.0.0.1", Some(Reserved)),
            ("255.255.255.254", Some(Reserved)),
            ("255.255.255.255", Some(Broadcast)),
            ("1.1.1.1", None),
            ("8.8.8.8", None),
            ("93.184.215.14", None),
            ("223.255.255.255", None),
        ];
        for (ip, want) in cases {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn ipv6_classes() {
        let cases = [
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("::2", Some(Reserved)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fc00::1", Some(UniqueLocal)),
            ("fdff:ffff::1", Some(UniqueLocal)),
            ("fec0::1", Some(UniqueLocal)),
            ("ff02::1", Some(Multicast)),
            ("ff0e::1", Some(Multicast)),
            ("2001:db8::1", Some(Documentation)),
            ("3fff::1", Some(Documentation)),
            ("2001:2::1", Some(Benchmarking)),
            ("2001::1", Some(Reserved)), // Teredo
            ("2001:1ff::1", Some(Reserved)),
            ("100::1", Some(Reserved)),
            ("64:ff9b:1::1", Some(Reserved)),
            ("5f00::1", Some(Reserved)),
            ("4000::1", Some(Reserved)),
            ("1::1", Some(Reserved)),
            ("e000::1", Some(Reserved)),
            ("2001:200::1", None),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001:80b::200e", None),
            ("3ffe::1", None),
        ];
        for (ip, want) in cases {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn ipv6_forms_of_ipv4() {
        let cases = [
            // IPv4-mapped
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:100.64.0.1", Some(SharedAddressSpace)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("::ffff:255.255.255.255", Some(Broadcast)),
            ("::ffff:8.8.8.8", None),
            // IPv4-compatible (deprecated)
            ("::127.0.0.1", Some(Loopback)),
            ("::192.168.0.1", Some(Private)),
            ("::8.8.8.8", Some(Reserved)),
            // IPv4-translated
            ("::ffff:0:127.0.0.1", Some(Loopback)),
            ("::ffff:0:8.8.8.8", None),
            // NAT64 well-known prefix
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::10.0.0.1", Some(Private)),
            ("64:ff9b::169.254.169.254", Some(LinkLocal)),
            ("64:ff9b::8.8.8.8", None),
            // 6to4
            ("2002:7f00:1::1", Some(Loopback)),
            ("2002:c0a8:101::1", Some(Private)),
            ("2002:a9fe:a9fe::", Some(LinkLocal)),
            ("2002:808:808::1", None),
        ];
        for (ip, want) in cases {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn agrees_with_std_where_std_is_stable() {
        // Every address std calls loopback, private, link-local, multicast,
        // unspecified, broadcast or documentation is refused here too.
        let samples = (0u32..=255).flat_map(|a| [a << 24 | 1, a << 24 | 0x00ff_ff01]);
        for bits in samples {
            let v4 = Ipv4Addr::from_bits(bits);
            let std_special = v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation();
            if std_special {
                assert!(classify(IpAddr::V4(v4)).is_some(), "{v4}");
            }
        }
    }
}
