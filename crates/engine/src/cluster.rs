//! Redis Cluster: the topology, and which node each request goes to.
//!
//! Before each phase the coordinator reads the topology from the seed node with
//! `CLUSTER SHARDS` (Redis 7.0 and later), or `CLUSTER SLOTS` where that is unknown:
//! every node's address and role, and the master of each of the 16384 slots. For every
//! command of the phase it asks `COMMAND INFO` where its first key is and whether it is
//! read-only (commands the server does not describe are routed by their second word, the
//! key of almost every command).
//!
//! Each worker keeps its own copy of the slot map. A request goes to the master of its
//! key's slot ([`resplab_proto::resp::cluster::key_slot`]), or, with
//! `read_from_replicas`, a read-only command to one of that master's replicas (each
//! client picks its own, so reads spread over them); a keyless command goes to the
//! client's home master. A `MOVED` reply updates the slot in the worker's map, marks the
//! map for a refresh from the server, and the request is sent again to the new owner; an
//! `ASK` reply sends `ASKING` and the request to the node named, without changing the
//! map; `TRYAGAIN` (a multi-key request during a migration) sends it again. A request is
//! redirected at most [`MAX_REDIRECTS`] times, then counted as an error. Its latency runs
//! from its first send to the reply that finally answers it.

use crate::config::{RunConfig, Target};
use crate::conn::InFlight;
use crate::connect::{self, StdStream};
use crate::error::EngineError;
use crate::tally::CmdTally;
use resplab_proto::resp::cluster::{key_slot, Redirect, SLOTS};
use resplab_proto::resp::value::Value;
use resplab_workload::{Request, Workload};

/// A slot no node serves (yet).
pub(crate) const NO_NODE: u16 = u16::MAX;

/// Most nodes a worker's map takes (redirections naming more are errors).
pub(crate) const MAX_NODES: usize = 1024;

/// Redirections a request may take before it counts as an error.
pub(crate) const MAX_REDIRECTS: u8 = 16;

/// One node of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub target: Target,
    /// `None` for a master; the index of its master for a replica.
    pub master_of: Option<usize>,
}

impl Node {
    pub(crate) fn name(&self) -> String {
        self.target.to_string()
    }
}

/// The nodes and the slot map.
#[derive(Clone, Debug)]
pub(crate) struct Topology {
    pub nodes: Vec<Node>,
    /// Master node index of each slot, [`NO_NODE`] when unserved.
    pub slots: Vec<u16>,
    /// Which command read it: `CLUSTER SHARDS` or `CLUSTER SLOTS`.
    pub source: &'static str,
}

/// How one command of a phase is routed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CommandRoute {
    /// Index of its first key argument (`None`: keyless).
    pub key_arg: Option<usize>,
    /// Read-only: may go to a replica.
    pub readonly: bool,
}

impl Topology {
    /// The masters that serve slots, in the order of their first slot (a master without
    /// slots gets no requests).
    pub(crate) fn masters(&self) -> Vec<usize> {
        let mut seen = vec![false; self.nodes.len()];
        let mut out = Vec::new();
        for &n in &self.slots {
            if n != NO_NODE && !seen[usize::from(n)] {
                seen[usize::from(n)] = true;
                out.push(usize::from(n));
            }
        }
        out
    }

    /// The replicas of master `m`.
    pub(crate) fn replicas_of(&self, m: usize) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].master_of == Some(m))
            .collect()
    }

    /// The index of the node at `target`, adding it (as a master) when it is new.
    pub(crate) fn node_at(&mut self, target: Target) -> usize {
        if let Some(i) = self.nodes.iter().position(|n| n.target == target) {
            return i;
        }
        self.nodes.push(Node {
            target,
            master_of: None,
        });
        self.nodes.len() - 1
    }

    /// Takes the slot map of `newer` (read again from the server), keeping this map's
    /// node numbering: nodes new to this map are added.
    pub(crate) fn refresh_from(&mut self, newer: &Topology) {
        let index: Vec<usize> = newer
            .nodes
            .iter()
            .map(|n| self.node_at(n.target.clone()))
            .collect();
        for (k, n) in newer.nodes.iter().enumerate() {
            let i = index[k];
            self.nodes[i].master_of = n.master_of.map(|m| index[m]);
        }
        for (slot, &n) in newer.slots.iter().enumerate() {
            if n != NO_NODE {
                self.slots[slot] = index[usize::from(n)] as u16;
            }
        }
    }

    /// Reads the topology through `stream`, a connection to one node at `seed`.
    /// `tls`: take the nodes' TLS ports.
    ///
    /// # Errors
    /// A sentence saying what the node answered when neither command gives a topology.
    pub(crate) fn fetch(stream: &mut StdStream, seed: &Target, tls: bool) -> Result<Self, String> {
        let seed_host = match seed {
            Target::Tcp { host, .. } => host.clone(),
            Target::Unix { .. } => {
                return Err("a cluster is reached over TCP, not a Unix socket".into())
            }
        };
        let shards = connect::call(stream, &[b"CLUSTER", b"SHARDS"])
            .map_err(|e| format!("CLUSTER SHARDS failed: {e}"))?;
        let topo = match connect::error_text(&shards) {
            None => from_shards(&shards, &seed_host, tls)?,
            Some(_) => {
                let slots = connect::call(stream, &[b"CLUSTER", b"SLOTS"])
                    .map_err(|e| format!("CLUSTER SLOTS failed: {e}"))?;
                if let Some(text) = connect::error_text(&slots) {
                    return Err(format!("CLUSTER SLOTS was refused: {text}"));
                }
                from_slots(&slots, &seed_host)?
            }
        };
        let unserved = topo.slots.iter().filter(|&&n| n == NO_NODE).count();
        if unserved == SLOTS {
            return Err(format!(
                "{} lists no slot served by any node: the cluster is not formed",
                topo.source
            ));
        }
        Ok(topo)
    }
}

/// Whether the server at the other end of `stream` is a cluster node (`INFO cluster`
/// says `cluster_enabled:1`). A server without the section, or with cluster mode off:
/// `false`.
pub(crate) fn is_cluster(stream: &mut StdStream) -> bool {
    match connect::call(stream, &[b"INFO", b"cluster"]) {
        Ok(Value::Blob(b)) | Ok(Value::Verbatim { text: b, .. }) => {
            resplab_proto::resp::info::fields(&String::from_utf8_lossy(&b))
                .get("cluster_enabled")
                .is_some_and(|v| v.trim() == "1")
        }
        _ => false,
    }
}

/// Key position and read-only flag of each command named in `names` (upper or lower
/// case), from `COMMAND INFO`. A command the server does not describe is routed by its
/// second word when it has one.
pub(crate) fn command_routes(
    stream: &mut StdStream,
    commands: &[(Vec<u8>, usize)],
) -> Vec<CommandRoute> {
    commands
        .iter()
        .map(|(name, argc)| {
            let fallback = CommandRoute {
                key_arg: (*argc > 1).then_some(1),
                readonly: false,
            };
            let info = connect::call(stream, &[b"COMMAND", b"INFO", name]).ok();
            let Some(Value::Array(items)) = info else {
                return fallback;
            };
            let Some(Value::Array(desc)) = items.first() else {
                return fallback;
            };
            // [name, arity, flags, first key, last key, step, …]
            let flags: Vec<String> = match desc.get(2) {
                Some(Value::Array(f) | Value::Set(f)) => f
                    .iter()
                    .filter_map(|v| match v {
                        Value::Simple(s) | Value::Blob(s) => {
                            Some(String::from_utf8_lossy(s).to_ascii_lowercase())
                        }
                        _ => None,
                    })
                    .collect(),
                _ => return fallback,
            };
            let first = match desc.get(3) {
                Some(Value::Integer(i)) => *i,
                _ => return fallback,
            };
            let key_arg = match usize::try_from(first) {
                Ok(0) | Err(_) => {
                    // Keys found by parsing (EVAL's numkeys, XREAD's STREAMS): the
                    // second word is as good a guess as any; MOVED corrects the rest.
                    flags
                        .iter()
                        .any(|f| f == "movablekeys")
                        .then_some(fallback.key_arg)
                        .flatten()
                }
                Ok(k) => (k < *argc).then_some(k),
            };
            CommandRoute {
                key_arg,
                readonly: flags.iter().any(|f| f == "readonly"),
            }
        })
        .collect()
}

/// The plan of phase `p`: the topology read again from the seed (the one read at the
/// start when that fails) and the routing of each of the phase's commands.
///
/// # Errors
/// When the seed cannot be reached at all.
pub(crate) fn plan_phase(
    cfg: &RunConfig,
    workload: &Workload,
    p: usize,
    seed: &Topology,
) -> Result<ClusterPlan, EngineError> {
    let mut ctl =
        connect::open_ready(cfg, cfg.connect_timeout).map_err(|e| e.into_engine(&cfg.target))?;
    let topo =
        Topology::fetch(&mut ctl, &cfg.target, cfg.tls.is_some()).unwrap_or_else(|_| seed.clone());
    // The command word and argument count of each command of the phase, from requests
    // its generator makes.
    let n = workload.phases().get(p).map_or(0, |ph| ph.commands.len());
    let mut commands: Vec<Option<(Vec<u8>, usize)>> = vec![None; n];
    let mut gen = workload.generator(p, 0);
    let mut req = Request::new();
    gen.reserve(&mut req);
    for _ in 0..(1000 * n).max(1000) {
        let idx = gen.next(&mut req);
        if let Some(slot) = commands.get_mut(idx).filter(|c| c.is_none()) {
            *slot = Some((req.arg(0).unwrap_or_default().to_vec(), req.arg_count()));
        }
        if commands.iter().all(Option::is_some) {
            break;
        }
    }
    let named: Vec<(Vec<u8>, usize)> = commands
        .into_iter()
        .map(|c| c.unwrap_or_default())
        .collect();
    let routes = command_routes(&mut ctl, &named);
    Ok(ClusterPlan {
        topo,
        routes,
        read_from_replicas: cfg.read_from_replicas,
    })
}

/// Sends one command to the master of its key (its second word) and returns the reply:
/// the set-up commands of a workload in a cluster.
///
/// # Errors
/// When that node cannot be reached.
pub(crate) fn call_routed(
    cfg: &RunConfig,
    topo: &Topology,
    args: &[&[u8]],
) -> std::io::Result<Value> {
    let node = args
        .get(1)
        .map(|k| topo.slots[usize::from(key_slot(k))])
        .filter(|&n| n != NO_NODE)
        .map(usize::from)
        .or_else(|| topo.masters().first().copied())
        .unwrap_or(0);
    let target = topo
        .nodes
        .get(node)
        .map_or_else(|| cfg.target.clone(), |n| n.target.clone());
    let mut s = connect::open_ready_to(cfg, &target, false, cfg.connect_timeout)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    connect::call(&mut s, args)
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Simple(b) | Value::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::Verbatim { text, .. } => Some(String::from_utf8_lossy(text).into_owned()),
        _ => None,
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        other => text(other)?.parse().ok(),
    }
}

/// The fields of a RESP3 map or of a RESP2 flat key/value array.
fn fields(v: &Value) -> Vec<(String, &Value)> {
    match v {
        Value::Map(pairs) => pairs
            .iter()
            .filter_map(|(k, v)| Some((text(k)?, v)))
            .collect(),
        Value::Array(items) => items
            .chunks_exact(2)
            .filter_map(|kv| Some((text(&kv[0])?, &kv[1])))
            .collect(),
        _ => Vec::new(),
    }
}

fn field<'a>(f: &'a [(String, &'a Value)], name: &str) -> Option<&'a Value> {
    f.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
}

/// A node's host: its announced endpoint, else its IP, else the seed's host (a node that
/// does not know its own address, `?` or empty).
fn host_of(candidates: &[Option<String>], seed_host: &str) -> String {
    candidates
        .iter()
        .flatten()
        .find(|h| !h.is_empty() && *h != "?")
        .cloned()
        .unwrap_or_else(|| seed_host.to_string())
}

fn from_shards(v: &Value, seed_host: &str, tls: bool) -> Result<Topology, String> {
    let Value::Array(shards) = v else {
        return Err("CLUSTER SHARDS did not answer with an array".into());
    };
    let mut topo = Topology {
        nodes: Vec::new(),
        slots: vec![NO_NODE; SLOTS],
        source: "CLUSTER SHARDS",
    };
    for shard in shards {
        let f = fields(shard);
        let nodes = match field(&f, "nodes") {
            Some(Value::Array(n)) => n,
            _ => continue,
        };
        let mut master = None;
        let mut replicas = Vec::new();
        for node in nodes {
            let nf = fields(node);
            // Redis 7.0 says "loading" for a replica whose replication offset is still 0
            // (a master that has had no write yet), so only a failed node is left out; a
            // replica that is really loading answers LOADING, which is counted by name.
            let online = field(&nf, "health")
                .and_then(text)
                .is_none_or(|h| !h.starts_with("fail"));
            let host = host_of(
                &[
                    field(&nf, "endpoint").and_then(text),
                    field(&nf, "ip").and_then(text),
                ],
                seed_host,
            );
            let port = if tls {
                field(&nf, "tls-port").or_else(|| field(&nf, "port"))
            } else {
                field(&nf, "port")
            }
            .and_then(int)
            .and_then(|p| u16::try_from(p).ok());
            let Some(port) = port else {
                continue;
            };
            let target = Target::Tcp { host, port };
            match field(&nf, "role").and_then(text).as_deref() {
                Some("master") => master = Some(target),
                _ if online => replicas.push(target),
                _ => {}
            }
        }
        let Some(master) = master else {
            continue;
        };
        let m = topo.node_at(master);
        for r in replicas {
            let i = topo.node_at(r);
            topo.nodes[i].master_of = Some(m);
        }
        if let Some(Value::Array(ranges)) = field(&f, "slots") {
            for pair in ranges.chunks_exact(2) {
                if let (Some(a), Some(b)) = (int(&pair[0]), int(&pair[1])) {
                    mark(&mut topo.slots, a, b, m);
                }
            }
        }
    }
    Ok(topo)
}

fn from_slots(v: &Value, seed_host: &str) -> Result<Topology, String> {
    let Value::Array(ranges) = v else {
        return Err("CLUSTER SLOTS did not answer with an array".into());
    };
    let mut topo = Topology {
        nodes: Vec::new(),
        slots: vec![NO_NODE; SLOTS],
        source: "CLUSTER SLOTS",
    };
    for range in ranges {
        let Value::Array(parts) = range else {
            continue;
        };
        let (Some(a), Some(b)) = (parts.first().and_then(int), parts.get(1).and_then(int)) else {
            continue;
        };
        let mut master = None;
        for (k, node) in parts.iter().skip(2).enumerate() {
            let Value::Array(addr) = node else {
                continue;
            };
            let host = host_of(&[addr.first().and_then(text)], seed_host);
            let Some(port) = addr
                .get(1)
                .and_then(int)
                .and_then(|p| u16::try_from(p).ok())
            else {
                continue;
            };
            let i = topo.node_at(Target::Tcp { host, port });
            match master {
                None if k == 0 => master = Some(i),
                Some(m) => topo.nodes[i].master_of = Some(m),
                None => {}
            }
        }
        if let Some(m) = master {
            mark(&mut topo.slots, a, b, m);
        }
    }
    Ok(topo)
}

fn mark(slots: &mut [u16], first: i64, last: i64, node: usize) {
    let (Ok(a), Ok(b)) = (usize::try_from(first), usize::try_from(last)) else {
        return;
    };
    if a <= b {
        for s in slots.iter_mut().take(b.min(SLOTS - 1) + 1).skip(a) {
            *s = node as u16;
        }
    }
}

/// What the coordinator hands every worker of a phase in cluster mode.
#[derive(Clone, Debug)]
pub(crate) struct ClusterPlan {
    pub topo: Topology,
    /// Routing of each command of the phase, by command index.
    pub routes: Vec<CommandRoute>,
    pub read_from_replicas: bool,
}

/// Per-node counts of one worker.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeTally {
    /// Replies that answered requests (latency, errors, bytes) at this node.
    pub t: CmdTally,
    /// `MOVED`, `ASK` and `TRYAGAIN` replies this node sent.
    pub moved: u64,
    pub ask: u64,
    pub tryagain: u64,
}

/// A request generated for a connection that had no room for it yet.
#[derive(Debug)]
pub(crate) struct Held {
    pub conn: usize,
    pub cmd: u16,
    pub intended_ns: u64,
    pub measured: bool,
    pub bytes: Vec<u8>,
}

/// Closed loop: requests a client generated for one of its connections while filling
/// another, waiting for that connection to have room (at most `pipeline` of them).
#[derive(Debug, Default)]
pub(crate) struct Stash {
    /// Their wire bytes, oldest first from `head`.
    pub bytes: Vec<u8>,
    pub head: usize,
    /// Command index and wire length of each, oldest first.
    pub items: std::collections::VecDeque<(u16, u32)>,
}

impl Stash {
    /// Removes the oldest request: its command and the range of its bytes in `bytes`
    /// (valid until the next push).
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u16, std::ops::Range<usize>)> {
        let (cmd, len) = self.items.pop_front()?;
        let start = self.head;
        self.head += len as usize;
        Some((cmd, start..self.head))
    }

    /// Forgets bytes no request needs any more.
    #[inline]
    pub(crate) fn trim(&mut self) {
        if self.items.is_empty() {
            self.bytes.clear();
            self.head = 0;
        } else if self.head > 64 * 1024 && self.head * 2 > self.bytes.len() {
            self.bytes.drain(..self.head);
            self.head = 0;
        }
    }
}

/// A redirected request waiting to be sent again.
#[derive(Debug)]
pub(crate) struct Pending {
    pub client: usize,
    /// The node that redirected it.
    pub from_node: usize,
    pub f: InFlight,
    pub bytes: Vec<u8>,
    /// `None`: `TRYAGAIN`, sent again to the same node.
    pub redirect: Option<Redirect>,
}

/// A worker's cluster state: its copy of the topology and its clients' connections.
#[derive(Debug)]
pub(crate) struct ClusterState {
    pub topo: Topology,
    pub routes: Vec<CommandRoute>,
    pub read_from_replicas: bool,
    /// Replicas of each node (empty for replicas and replica-less masters).
    replicas: Vec<Vec<usize>>,
    /// Each client's home master: where its keyless commands go.
    pub home: Vec<usize>,
    /// `conn_of[client][node]`: the client's connection to the node (`usize::MAX`: none).
    pub conn_of: Vec<Vec<usize>>,
    pub held: Vec<Option<Held>>,
    /// Closed loop: `stash[client][node]`.
    pub stash: Vec<Vec<Stash>>,
    /// Buffers of held requests, kept for reuse.
    pub spare: Vec<Vec<u8>>,
    pub pending: Vec<Pending>,
    pub nodes: Vec<NodeTally>,
    /// A `MOVED` was seen: read the slot map again from the server.
    pub refresh_due: bool,
    /// Per node: a connection to it failed; not tried again before this time.
    pub unreachable_until: Vec<Option<std::time::Instant>>,
}

impl ClusterState {
    pub(crate) fn new(plan: &ClusterPlan, clients: usize) -> ClusterState {
        let mut st = ClusterState {
            topo: plan.topo.clone(),
            routes: plan.routes.clone(),
            read_from_replicas: plan.read_from_replicas,
            replicas: Vec::new(),
            home: Vec::with_capacity(clients),
            conn_of: vec![Vec::new(); clients],
            held: (0..clients).map(|_| None).collect(),
            stash: (0..clients).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
            pending: Vec::new(),
            nodes: Vec::new(),
            refresh_due: false,
            unreachable_until: Vec::new(),
        };
        st.grow();
        st
    }

    /// Sizes the per-node tables to the topology (after nodes were added).
    pub(crate) fn grow(&mut self) {
        let n = self.topo.nodes.len();
        self.nodes.resize_with(n, NodeTally::default);
        self.unreachable_until.resize(n, None);
        for row in &mut self.conn_of {
            row.resize(n, usize::MAX);
        }
        for row in &mut self.stash {
            row.resize_with(n, Stash::default);
        }
        self.replicas = (0..n).map(|m| self.topo.replicas_of(m)).collect();
    }

    /// The nodes every client connects to at the start: the masters, and their replicas
    /// when reads go to replicas.
    pub(crate) fn initial_nodes(&self) -> Vec<usize> {
        let mut out = self.topo.masters();
        if self.read_from_replicas {
            for m in self.topo.masters() {
                out.extend(self.replicas[m].iter().copied());
            }
        }
        out
    }

    /// The node that request `req` (command `cmd`) of `client` goes to.
    #[inline]
    pub(crate) fn node_for(&self, client: usize, cmd: usize, req: &Request) -> usize {
        let route = self.routes.get(cmd).copied().unwrap_or_default();
        let home = self.home.get(client).copied().unwrap_or(0);
        let Some(key) = route.key_arg.and_then(|k| req.arg(k)) else {
            return home;
        };
        let m = self.topo.slots[usize::from(key_slot(key))];
        if m == NO_NODE {
            return home;
        }
        let m = usize::from(m);
        if self.read_from_replicas && route.readonly {
            if let Some(reps) = self.replicas.get(m).filter(|r| !r.is_empty()) {
                return reps[client % reps.len()];
            }
        }
        m
    }

    /// Whether `node` is a replica (its connections need `READONLY`).
    pub(crate) fn is_replica(&self, node: usize) -> bool {
        self.topo
            .nodes
            .get(node)
            .is_some_and(|n| n.master_of.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(s: &str) -> Value {
        Value::Blob(s.as_bytes().to_vec())
    }

    fn node(id: &str, port: i64, role: &str, health: &str) -> Value {
        Value::Array(vec![
            blob("id"),
            blob(id),
            blob("port"),
            Value::Integer(port),
            blob("ip"),
            blob("127.0.0.1"),
            blob("endpoint"),
            blob("127.0.0.1"),
            blob("role"),
            blob(role),
            blob("health"),
            blob(health),
        ])
    }

    #[test]
    fn shards_give_masters_replicas_and_slots() {
        let shards = Value::Array(vec![
            Value::Array(vec![
                blob("slots"),
                Value::Array(vec![Value::Integer(0), Value::Integer(8191)]),
                blob("nodes"),
                Value::Array(vec![
                    node("a", 7000, "master", "online"),
                    node("b", 7002, "replica", "online"),
                ]),
            ]),
            Value::Map(vec![
                (
                    blob("slots"),
                    Value::Array(vec![
                        Value::Integer(8192),
                        Value::Integer(10000),
                        Value::Integer(10001),
                        Value::Integer(16383),
                    ]),
                ),
                (
                    blob("nodes"),
                    Value::Array(vec![
                        node("c", 7001, "master", "online"),
                        node("d", 7003, "replica", "failed"),
                    ]),
                ),
            ]),
        ]);
        let t = from_shards(&shards, "seed", false).unwrap();
        assert_eq!(t.masters(), vec![0, 2]);
        assert_eq!(t.replicas_of(0), vec![1]);
        assert!(t.replicas_of(2).is_empty(), "a failed replica is left out");
        assert_eq!(t.slots[0], 0);
        assert_eq!(t.slots[8191], 0);
        assert_eq!(t.slots[8192], 2);
        assert_eq!(t.slots[16383], 2);
        assert_eq!(t.nodes[2].name(), "127.0.0.1:7001");
    }

    #[test]
    fn odd_topology_replies_never_panic() {
        let odd = [
            Value::Null,
            Value::Array(vec![Value::Null, Value::Integer(-5)]),
            Value::Array(vec![Value::Array(vec![
                Value::Integer(-1),
                Value::Integer(99_999),
                Value::Array(vec![blob("h"), Value::Integer(70_000)]),
            ])]),
            Value::Array(vec![Value::Array(vec![
                Value::Integer(9000),
                Value::Integer(10),
                Value::Array(vec![blob("h"), Value::Integer(7000)]),
            ])]),
            Value::Array(vec![Value::Map(vec![
                (blob("slots"), Value::Array(vec![Value::Integer(0)])),
                (blob("nodes"), Value::Array(vec![Value::Integer(1)])),
            ])]),
            Value::Array(vec![Value::Array(vec![
                blob("slots"),
                Value::Array(vec![Value::Integer(16_000), Value::Integer(1 << 40)]),
                blob("nodes"),
                Value::Array(vec![node("x", 1 << 20, "master", "online")]),
            ])]),
        ];
        for v in &odd {
            let _ = from_shards(v, "seed", false);
            let _ = from_shards(v, "seed", true);
            let _ = from_slots(v, "seed");
        }
        // A reversed range marks nothing; slots past the end are ignored.
        let t = from_slots(&odd[3], "seed").unwrap();
        assert!(t.slots.iter().all(|&n| n == NO_NODE));
        let t = from_slots(&odd[2], "seed").unwrap();
        assert!(t.nodes.is_empty(), "a port over 65535 is no node");
    }

    #[test]
    fn slots_fallback_and_refresh_keep_numbering() {
        let addr = |h: &str, p: i64| Value::Array(vec![blob(h), Value::Integer(p), blob("id")]);
        let slots = Value::Array(vec![
            Value::Array(vec![
                Value::Integer(0),
                Value::Integer(99),
                addr("", 7000),
                addr("10.0.0.2", 7001),
            ]),
            Value::Array(vec![
                Value::Integer(100),
                Value::Integer(16383),
                addr("10.0.0.3", 7002),
            ]),
        ]);
        let mut t = from_slots(&slots, "seed.example").unwrap();
        assert_eq!(t.nodes[0].name(), "seed.example:7000");
        assert_eq!(t.nodes[1].master_of, Some(0));
        assert_eq!(t.slots[99], 0);
        assert_eq!(t.slots[100], 2);
        let newer = from_slots(
            &Value::Array(vec![Value::Array(vec![
                Value::Integer(0),
                Value::Integer(16383),
                addr("10.0.0.9", 7009),
            ])]),
            "seed.example",
        )
        .unwrap();
        t.refresh_from(&newer);
        assert_eq!(t.nodes.len(), 4);
        assert_eq!(t.slots[5], 3);
        assert_eq!(t.nodes[0].name(), "seed.example:7000", "old numbering kept");
    }
}
