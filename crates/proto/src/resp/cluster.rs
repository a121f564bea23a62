//! Redis Cluster's protocol facts: which slot a key lives in, and what a redirection says.
//!
//! - [`key_slot`]: CRC16 (XMODEM: polynomial 0x1021, initial value 0, no reflection) of the
//!   key, or of its hash tag — the bytes between the first `{` and the first `}` after it,
//!   when there is at least one byte between them — modulo 16384.
//! - [`parse_redirect`]: `-MOVED 3999 127.0.0.1:6381` and `-ASK 3999 127.0.0.1:6381`
//!   (an empty host, `:6381`, means "the host you are talking to"; IPv6 hosts may come
//!   with or without brackets).

/// Number of hash slots of a Redis Cluster.
pub const SLOTS: usize = 16384;

const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC16: [u16; 256] = crc16_table();

/// Two bytes at a time: shifting the register's high byte through 16 more bits is
/// `TWICE[hi]`, its low byte through 16 bits is `CRC16[lo]` (the register is linear in
/// its bits), so `crc' = TWICE[hi ^ b0] ^ CRC16[lo ^ b1]` — two independent lookups.
const fn crc16_twice(t: &[u16; 256]) -> [u16; 256] {
    let mut out = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        out[i] = (t[i] << 8) ^ t[(t[i] >> 8) as usize];
        i += 1;
    }
    out
}

static TWICE: [u16; 256] = crc16_twice(&crc16_table());

/// The part of `key` that is hashed: its hash tag when it has a non-empty one.
#[inline]
pub fn hashed_part(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// The hash slot of `key`.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    let bytes = hashed_part(key);
    let mut crc: u16 = 0;
    let mut pairs = bytes.chunks_exact(2);
    for p in &mut pairs {
        let [hi, lo] = crc.to_be_bytes();
        crc = TWICE[usize::from(hi ^ p[0])] ^ CRC16[usize::from(lo ^ p[1])];
    }
    if let Some(&b) = pairs.remainder().first() {
        crc = (crc << 8) ^ CRC16[usize::from((crc >> 8) as u8 ^ b)];
    }
    crc & (SLOTS as u16 - 1)
}

/// Which redirection a reply is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// The slot has moved for good: update the slot map.
    Moved,
    /// The slot is being migrated: ask the other node once, after `ASKING`.
    Ask,
}

/// A parsed `MOVED`/`ASK` error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub slot: u16,
    /// Host as given (brackets of an IPv6 address removed); empty when the server left
    /// it out.
    pub host: String,
    pub port: u16,
}

/// Parses a redirection from an error reply's bytes (with or without the leading `-`
/// and the trailing CRLF). `None` for anything that is not a well-formed redirection.
pub fn parse_redirect(reply: &[u8]) -> Option<Redirect> {
    let text = std::str::from_utf8(reply).ok()?;
    let text = text.strip_prefix('-').unwrap_or(text).trim_end();
    let mut words = text.split(' ');
    let kind = match words.next()? {
        "MOVED" => RedirectKind::Moved,
        "ASK" => RedirectKind::Ask,
        _ => return None,
    };
    let slot: u16 = words.next()?.parse().ok()?;
    if usize::from(slot) >= SLOTS {
        return None;
    }
    let addr = words.next()?;
    if words.next().is_some() {
        return None;
    }
    let (host, port) = addr.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Some(Redirect {
        kind,
        slot,
        host: host.to_string(),
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit CRC16/XMODEM, to check the table-driven one.
    fn slow(key: &[u8]) -> u16 {
        let mut crc: u16 = 0;
        for &b in key {
            crc ^= u16::from(b) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 {
                    (crc << 1) ^ 0x1021
                } else {
                    crc << 1
                };
            }
        }
        crc
    }

    #[test]
    fn slots_follow_the_specification() {
        // The cluster specification's check value: CRC16("123456789") = 0x31C3.
        assert_eq!(slow(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"123456789"), 0x31C3);
        for key in [&b""[..], b"a", b"key:000000000001", b"\xff\x00\x80"] {
            assert_eq!(key_slot(key), slow(key) & 0x3fff);
        }
        // Every length, odd and even, and every byte value at every position.
        let mut key = Vec::new();
        for i in 0..300u32 {
            key.push((i.wrapping_mul(151) % 256) as u8);
            let k: Vec<u8> = key
                .iter()
                .map(|&b| if b == b'{' { b'x' } else { b })
                .collect();
            assert_eq!(key_slot(&k), slow(&k) & 0x3fff, "length {}", k.len());
        }
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"x{user1000}y{z}"), key_slot(b"user1000"));
        // An empty tag does not count: the whole key is hashed.
        assert_eq!(key_slot(b"foo{}{bar}"), slow(b"foo{}{bar}") & 0x3fff);
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
        assert_eq!(key_slot(b"foo{bar"), slow(b"foo{bar") & 0x3fff);
    }

    #[test]
    fn redirections_parse() {
        assert_eq!(
            parse_redirect(b"-MOVED 3999 127.0.0.1:6381\r\n"),
            Some(Redirect {
                kind: RedirectKind::Moved,
                slot: 3999,
                host: "127.0.0.1".into(),
                port: 6381
            })
        );
        let ask = parse_redirect(b"ASK 1 [::1]:7000").unwrap();
        assert_eq!(
            (ask.kind, ask.host.as_str(), ask.port),
            (RedirectKind::Ask, "::1", 7000)
        );
        assert_eq!(parse_redirect(b"-MOVED 5 :7001").unwrap().host, "");
        for bad in [
            &b"-MOVED 16384 h:1"[..],
            b"-MOVED x h:1",
            b"-MOVED 1 h",
            b"-MOVED 1 h:99999",
            b"-ERR MOVED 1 h:1",
            b"-MOVED 1 h:1 extra",
            b"\xff",
        ] {
            assert_eq!(
                parse_redirect(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
