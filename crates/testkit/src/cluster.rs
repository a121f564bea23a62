//! A real local Redis Cluster for integration tests.
//!
//! [`RedisCluster::start`] starts `masters + masters × replicas` `redis-server` processes
//! (each a [`RedisServer`] with cluster mode on, its cluster bus on a free port of its
//! own, so no port above 55535 breaks the usual "port + 10000" rule), splits the 16384
//! slots evenly over the masters with `CLUSTER ADDSLOTSRANGE`, introduces the nodes with
//! `CLUSTER MEET`, attaches the replicas with `CLUSTER REPLICATE`, and waits until every
//! node says `cluster_state:ok` and knows all the others — with the production former,
//! `resplab_sys::cluster::form`, speaking through this kit's own client. Dropping it
//! stops every node.
//!
//! [`RedisCluster::migrate_slot`] moves one slot and its keys from one master to another
//! the way `redis-cli --cluster reshard` does (`SETSLOT IMPORTING/MIGRATING`, `MIGRATE`
//! in batches, `SETSLOT NODE`), so a test can run load across a live migration.

use crate::client::{Client, Reply};
use crate::redis::RedisServer;
use std::io;
use std::time::Duration;

/// A running local cluster owned by a test.
#[derive(Debug)]
pub struct RedisCluster {
    /// Masters first (in slot order), then the replicas (replica `k` of master `m` at
    /// `masters + m * replicas + k`).
    nodes: Vec<RedisServer>,
    ids: Vec<String>,
    masters: usize,
    /// Each node's TLS port, when started with TLS (in `nodes` order).
    tls_ports: Vec<u16>,
}

fn call(c: &mut Client, args: &[&str]) -> io::Result<Reply> {
    match c.cmd(args)? {
        Reply::Error(e) => Err(io::Error::other(format!("{}: {e}", args.join(" ")))),
        r => Ok(r),
    }
}

impl RedisCluster {
    /// Starts and forms a cluster of `masters` masters with `replicas` replicas each.
    ///
    /// # Errors
    /// When a node does not start, or the cluster is not formed within 60 s.
    pub fn start(masters: usize, replicas: usize) -> io::Result<RedisCluster> {
        Self::start_with(masters, replicas, None, true)
    }

    /// Starts `masters` masters, gives them their slots and introduces them to each
    /// other ([`resplab_sys::cluster::introduce`]), and returns at once, before the
    /// cluster has settled: what a client started right after `redis-cli --cluster
    /// create` meets.
    ///
    /// # Errors
    /// When a node does not start or refuses a step of the introduction.
    pub fn start_unsettled(masters: usize) -> io::Result<RedisCluster> {
        Self::start_with(masters, 0, None, false)
    }

    /// Starts a cluster whose nodes also listen on a TLS port each (certificates from
    /// `tls`; clients are not asked for certificates) and talk TLS to each other on the
    /// cluster bus; `CLUSTER SHARDS` then lists each node's `tls-port`. The plain ports
    /// stay open for the test's own client.
    ///
    /// # Errors
    /// As [`RedisCluster::start`].
    pub fn start_tls(
        masters: usize,
        replicas: usize,
        tls: &crate::tls::TlsFiles,
    ) -> io::Result<RedisCluster> {
        Self::start_with(masters, replicas, Some(tls), true)
    }

    fn start_with(
        masters: usize,
        replicas: usize,
        tls: Option<&crate::tls::TlsFiles>,
        settle: bool,
    ) -> io::Result<RedisCluster> {
        let masters = masters.max(1);
        let mut nodes = Vec::new();
        let mut buses = Vec::new();
        let mut tls_ports = Vec::new();
        for _ in 0..masters * (1 + replicas) {
            let bus = crate::free_port()?.to_string();
            buses.push(bus.clone());
            let mut args: Vec<String> = [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "5000",
                "--cluster-port",
                &bus,
            ]
            .iter()
            .map(|a| a.to_string())
            .collect();
            if let Some(f) = tls {
                let port = crate::free_port()?;
                tls_ports.push(port);
                args.extend(tls_args(port, f));
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            nodes.push(RedisServer::start_with(&refs, false)?);
        }
        let plan: Vec<resplab_sys::cluster::Node> = nodes
            .iter()
            .zip(&buses)
            .map(|(n, bus)| resplab_sys::cluster::Node {
                port: n.port(),
                bus: bus.parse().unwrap_or(0),
            })
            .collect();
        // The production former, with this kit's own client as the wire.
        let mut send = |port: u16, args: &[&str]| -> Result<String, String> {
            let node = nodes
                .iter()
                .find(|n| n.port() == port)
                .ok_or_else(|| format!("no node on port {port}"))?;
            let mut c = node.client().map_err(|e| e.to_string())?;
            call(&mut c, args)
                .map(|r| r.as_text().unwrap_or_default())
                .map_err(|e| e.to_string())
        };
        let formed = if settle {
            resplab_sys::cluster::form(&plan, masters, replicas, Duration::from_secs(60), &mut send)
        } else {
            resplab_sys::cluster::introduce(&plan, masters, &mut send)
        };
        let ids = formed.map_err(|e| {
            let logs: Vec<String> = nodes.iter().map(RedisServer::log_tail).collect();
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{e}; node logs:\n{}", logs.join("\n---\n")),
            )
        })?;
        Ok(RedisCluster {
            nodes,
            ids,
            masters,
            tls_ports,
        })
    }

    /// The TLS port of node `n` (masters first), when started with
    /// [`RedisCluster::start_tls`].
    pub fn tls_port(&self, n: usize) -> Option<u16> {
        self.tls_ports.get(n).copied()
    }

    /// The number of masters.
    pub fn masters(&self) -> usize {
        self.masters
    }

    /// Every node, masters first.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// Master `m`.
    pub fn master(&self, m: usize) -> &RedisServer {
        &self.nodes[m]
    }

    /// `127.0.0.1:PORT` of the first master: a seed address for clients.
    pub fn seed_addr(&self) -> String {
        self.nodes[0].addr()
    }

    /// The slot of `key`, as the server computes it (`CLUSTER KEYSLOT`).
    ///
    /// # Errors
    /// When the node cannot be asked.
    pub fn key_slot(&self, key: &str) -> io::Result<u16> {
        let reply = call(&mut self.nodes[0].client()?, &["CLUSTER", "KEYSLOT", key])?;
        reply
            .as_int()
            .and_then(|v| u16::try_from(v).ok())
            .ok_or_else(|| io::Error::other("CLUSTER KEYSLOT: not a slot number"))
    }

    /// The master that owns `slot` now (by index), as the first master sees it.
    ///
    /// # Errors
    /// When the node cannot be asked.
    pub fn owner_of(&self, slot: u16) -> io::Result<usize> {
        let reply = call(&mut self.nodes[0].client()?, &["CLUSTER", "SLOTS"])?;
        let Reply::Array(Some(ranges)) = reply else {
            return Err(io::Error::other("CLUSTER SLOTS: not an array"));
        };
        for r in ranges {
            let Reply::Array(Some(parts)) = r else {
                continue;
            };
            let (Some(a), Some(b)) = (
                parts.first().and_then(Reply::as_int),
                parts.get(1).and_then(Reply::as_int),
            ) else {
                continue;
            };
            if (a..=b).contains(&i64::from(slot)) {
                let port = match parts.get(2) {
                    Some(Reply::Array(Some(node))) => node.get(1).and_then(Reply::as_int),
                    _ => None,
                };
                return self
                    .nodes
                    .iter()
                    .position(|n| Some(i64::from(n.port())) == port)
                    .ok_or_else(|| io::Error::other("owner is not a node of this cluster"));
            }
        }
        Err(io::Error::other(format!("slot {slot} is not served")))
    }

    /// Moves `slot` with its keys from master `from` to master `to`, as `redis-cli
    /// --cluster reshard` does, `batch` keys per `MIGRATE`, sleeping `pause` between
    /// batches (so that a test's load sees the slot half-moved). Returns the number of
    /// keys moved.
    ///
    /// # Errors
    /// When a step is refused.
    pub fn migrate_slot(
        &self,
        slot: u16,
        from: usize,
        to: usize,
        batch: usize,
        pause: Duration,
    ) -> io::Result<u64> {
        let s = slot.to_string();
        let mut src = self.nodes[from].client()?;
        let mut dst = self.nodes[to].client()?;
        call(
            &mut dst,
            &["CLUSTER", "SETSLOT", &s, "IMPORTING", &self.ids[from]],
        )?;
        call(
            &mut src,
            &["CLUSTER", "SETSLOT", &s, "MIGRATING", &self.ids[to]],
        )?;
        let port = self.nodes[to].port().to_string();
        let count = batch.max(1).to_string();
        let mut moved = 0u64;
        loop {
            let keys = call(&mut src, &["CLUSTER", "GETKEYSINSLOT", &s, &count])?.as_text_list();
            if keys.is_empty() {
                break;
            }
            let mut args = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
            args.extend(keys.iter().map(String::as_str));
            call(&mut src, &args)?;
            moved += keys.len() as u64;
            std::thread::sleep(pause);
        }
        for n in [to, from] {
            call(
                &mut self.nodes[n].client()?,
                &["CLUSTER", "SETSLOT", &s, "NODE", &self.ids[to]],
            )?;
        }
        for n in 0..self.masters {
            if n != to && n != from {
                call(
                    &mut self.nodes[n].client()?,
                    &["CLUSTER", "SETSLOT", &s, "NODE", &self.ids[to]],
                )?;
            }
        }
        Ok(moved)
    }
}

/// The flags of a node that also listens for TLS on `port` and speaks TLS on its bus.
fn tls_args(port: u16, f: &crate::tls::TlsFiles) -> Vec<String> {
    vec![
        "--tls-port".to_string(),
        port.to_string(),
        "--tls-cert-file".into(),
        f.server_cert.display().to_string(),
        "--tls-key-file".into(),
        f.server_key.display().to_string(),
        "--tls-ca-cert-file".into(),
        f.ca.display().to_string(),
        "--tls-auth-clients".into(),
        "no".into(),
        "--tls-cluster".into(),
        "yes".into(),
        "--tls-replication".into(),
        "yes".into(),
    ]
}
