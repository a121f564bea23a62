//! The wire bytes of requests: each request is encoded straight into a connection's
//! write buffer, as RESP (multibulk, or inline where the workload asks for it) or as
//! RESPB frames, and an identical request in a row reuses the bytes of the one before.
//!
//! Nothing here allocates per request once its buffers have grown.

use crate::config::Wire;
use resplab_proto::resp::encode;
use resplab_workload::Request;

/// The wire bytes of the last request encoded, reused while requests repeat.
///
/// Many benchmark requests are identical from one to the next (`PING`, or `SET` without
/// random keys), and comparing a request with the previous one costs less than encoding
/// it again. Workloads whose requests differ (random keys, varying values) would pay the
/// comparison and the copy for nothing, so the cache turns itself off when fewer than
/// half of its first 1024 lookups hit.
#[derive(Debug)]
pub(super) struct WireCache {
    enabled: bool,
    valid: bool,
    cmd: usize,
    req: Request,
    wire: Vec<u8>,
    lookups: u32,
    hits: u32,
    /// `--protocol respb`: requests are encoded as RESPB frames (mux id 0).
    respb: Option<Box<RespbWire>>,
}

impl WireCache {
    const TRIAL: u32 = 1024;

    pub(super) fn for_wire(wire: Wire) -> Self {
        WireCache {
            respb: (wire == Wire::Respb).then(|| {
                Box::new(RespbWire {
                    enc: resplab_proto::respb::codec::Encoder::new(),
                    parts: Vec::new(),
                })
            }),
            ..WireCache::new()
        }
    }

    fn new() -> Self {
        WireCache {
            enabled: true,
            valid: false,
            cmd: 0,
            req: Request::new(),
            wire: Vec::new(),
            lookups: 0,
            hits: 0,
            respb: None,
        }
    }

    /// True when `req` (of command `cmd`) is the request whose bytes are in `wire`.
    #[inline]
    fn hit(&mut self, cmd: usize, req: &Request) -> bool {
        if !self.enabled {
            return false;
        }
        let hit = self.valid && self.cmd == cmd && same_request(&self.req, req);
        if self.lookups < Self::TRIAL {
            self.lookups += 1;
            self.hits += u32::from(hit);
            if self.lookups == Self::TRIAL && self.hits < Self::TRIAL / 2 {
                self.enabled = false;
            }
        }
        hit
    }

    /// Remembers `wire` as the encoding of `req`. Allocates only while the buffers grow.
    #[inline]
    fn store(&mut self, cmd: usize, req: &Request, wire: &[u8]) {
        if !self.enabled {
            return;
        }
        self.req.clear();
        for a in req.args() {
            self.req.push_arg(a);
        }
        self.req.set_inline(req.is_inline());
        self.wire.clear();
        self.wire.extend_from_slice(wire);
        self.cmd = cmd;
        self.valid = true;
    }
}

/// Compares two requests argument by argument. Requests are short, so a byte loop the
/// compiler inlines beats calling `memcmp` twice per request (which the derived
/// `PartialEq` does).
#[inline]
fn same_request(a: &Request, b: &Request) -> bool {
    a.arg_count() == b.arg_count()
        && a.payload_len() == b.payload_len()
        && a.is_inline() == b.is_inline()
        && a.args()
            .zip(b.args())
            .all(|(x, y)| x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p == q))
}

/// Encodes `req` (command `cmd`) at the end of `out`, reusing the cached bytes of an
/// identical previous request.
#[inline]
pub(super) fn encode_cached(cache: &mut WireCache, cmd: usize, req: &Request, out: &mut Vec<u8>) {
    let before = out.len();
    if cache.hit(cmd, req) {
        out.extend_from_slice(&cache.wire);
        return;
    }
    if let Some(w) = cache.respb.as_deref_mut() {
        encode_respb(w, req, out);
    } else if req.is_inline() && req.arg_count() <= 8 {
        let mut parts: [&[u8]; 8] = [&[]; 8];
        let n = req.arg_count();
        for (slot, arg) in parts.iter_mut().zip(req.args()) {
            *slot = arg;
        }
        encode::write_inline(out, &parts[..n]);
    } else {
        encode::write_command_iter(out, req.args());
    }
    cache.store(cmd, req, &out[before..]);
}

/// The RESPB encoder of a worker and the argument list it is handed, both kept from
/// request to request so that encoding allocates nothing once they have grown.
#[derive(Debug)]
struct RespbWire {
    enc: resplab_proto::respb::codec::Encoder,
    /// Always empty between requests; only its allocation is kept.
    parts: Vec<&'static [u8]>,
}

/// Encodes `req` as a RESPB frame on mux id 0. RESPB has no inline form: an inline
/// request goes as the same command.
#[inline]
fn encode_respb(w: &mut RespbWire, req: &Request, out: &mut Vec<u8>) {
    let mut parts: Vec<&[u8]> = std::mem::take(&mut w.parts);
    parts.extend(req.args());
    w.enc.encode(out, 0, &parts);
    // The slices borrowed the request; the emptied vector keeps its allocation.
    parts.clear();
    w.parts = parts.into_iter().map(|_| &[][..]).collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(args: &[&[u8]]) -> Request {
        let mut r = Request::new();
        for a in args {
            r.push_arg(a);
        }
        r
    }

    #[test]
    fn wire_cache_hits_only_identical_requests() {
        let mut c = WireCache::new();
        let ping = req(&[b"PING"]);
        assert!(!c.hit(0, &ping));
        c.store(0, &ping, b"*1\r\n$4\r\nPING\r\n");
        assert!(c.hit(0, &ping));
        assert_eq!(c.wire, b"*1\r\n$4\r\nPING\r\n");
        assert!(!c.hit(1, &ping), "another command index");
        assert!(!c.hit(0, &req(&[b"PINH"])));
        assert!(
            !c.hit(0, &req(&[b"PI", b"NG"])),
            "same bytes, other arguments"
        );
        let mut inline = req(&[b"PING"]);
        inline.set_inline(true);
        assert!(!c.hit(0, &inline));
    }

    #[test]
    fn respb_requests_are_encoded_with_kept_buffers() {
        let mut c = WireCache::for_wire(Wire::Respb);
        let mut out = Vec::new();
        encode_cached(&mut c, 0, &req(&[b"GET", b"k1"]), &mut out);
        let mut want = Vec::new();
        resplab_proto::respb::codec::encode_command(&mut want, 0, &[b"GET", b"k1"]);
        assert_eq!(out, want);
        let w = c.respb.as_deref().unwrap();
        assert!(w.parts.is_empty() && w.parts.capacity() >= 2);
        let kept = w.parts.as_ptr();
        out.clear();
        encode_cached(&mut c, 0, &req(&[b"GET", b"k2"]), &mut out);
        assert_eq!(c.respb.as_deref().unwrap().parts.as_ptr(), kept);
        assert_eq!(&out[..2], &[0, 0], "GET's opcode, not passthrough");
    }

    #[test]
    fn wire_cache_turns_itself_off_when_requests_differ() {
        let mut c = WireCache::new();
        for i in 0..WireCache::TRIAL {
            let r = req(&[b"GET", i.to_string().as_bytes()]);
            assert!(!c.hit(0, &r));
            c.store(0, &r, b"x");
        }
        assert!(!c.enabled);
        let r = req(&[b"GET", b"1"]);
        c.store(0, &r, b"y");
        assert!(!c.hit(0, &r), "a disabled cache never hits");
    }
}
