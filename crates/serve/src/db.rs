//! The keyspace.
//!
//! Sixteen databases (`SELECT 0` to `15`), each split into shards by a hash of the key,
//! every shard behind its own lock, so worker threads serving different keys do not wait
//! for each other. Values are strings, lists, sets, hashes, sorted sets and streams; keys
//! may carry an expiry time, checked when the key is read. Multi-key commands (`MSET`,
//! `MGET`, `DEL`, `EXISTS`) take one shard at a time: they are not atomic across keys.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Databases `SELECT` can choose.
pub const DATABASES: usize = 16;
const SHARDS: usize = 64;

/// A sorted-set score that orders totally (NaN is refused before it gets here).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A sorted set: members by score, and each member's score.
#[derive(Clone, Debug, Default)]
pub struct ZSet {
    pub by_score: BTreeSet<(Score, Vec<u8>)>,
    pub scores: HashMap<Vec<u8>, f64>,
}

/// A stream entry id: milliseconds and sequence.
pub type StreamId = (u64, u64);

/// A stream: its entries (id, field and value arguments) and the last id given.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    pub entries: VecDeque<(StreamId, Vec<Vec<u8>>)>,
    pub last: (u64, u64),
}

/// A stored value.
#[derive(Clone, Debug)]
pub enum Val {
    Str(Vec<u8>),
    List(VecDeque<Vec<u8>>),
    Set(HashSet<Vec<u8>>),
    Hash(HashMap<Vec<u8>, Vec<u8>>),
    ZSet(ZSet),
    Stream(Stream),
}

/// A key's value and its expiry.
#[derive(Clone, Debug)]
pub struct Entry {
    pub val: Val,
    pub expires: Option<Instant>,
}

/// One shard of a database: keys and their entries.
pub type Shard = HashMap<Vec<u8>, Entry>;

/// Every database.
#[derive(Debug)]
pub struct Db {
    shards: Vec<Mutex<Shard>>,
}

impl Default for Db {
    fn default() -> Self {
        Db {
            shards: (0..DATABASES * SHARDS)
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
        }
    }
}

fn hash(key: &[u8]) -> usize {
    // FNV-1a: cheap and spreads short keys well enough for shard choice.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as usize
}

impl Db {
    /// The shard holding `key` in database `db`, locked. A poisoned lock (a panic in
    /// another thread) is taken over: the data is plain values, never half-updated
    /// structures across a panic point.
    pub fn shard(&self, db: usize, key: &[u8]) -> MutexGuard<'_, Shard> {
        let i = db * SHARDS + hash(key) % SHARDS;
        self.shards[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keys in database `db` (expired ones not counted).
    pub fn size(&self, db: usize) -> usize {
        let now = Instant::now();
        (0..SHARDS)
            .map(|s| {
                self.shards[db * SHARDS + s]
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .values()
                    .filter(|e| e.expires.is_none_or(|t| t > now))
                    .count()
            })
            .sum()
    }

    /// Empties database `db`, or every database.
    pub fn flush(&self, db: Option<usize>) {
        for (i, s) in self.shards.iter().enumerate() {
            if db.is_none_or(|d| i / SHARDS == d) {
                s.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clear();
            }
        }
    }
}

/// The live entry of `key` in a locked shard: an expired one is removed first.
pub fn live<'a>(shard: &'a mut Shard, key: &[u8]) -> Option<&'a mut Entry> {
    if shard
        .get(key)
        .is_some_and(|e| e.expires.is_some_and(|t| t <= Instant::now()))
    {
        shard.remove(key);
    }
    shard.get_mut(key)
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An absolute Unix time in milliseconds as an instant (past times are now).
pub fn instant_at_unix_ms(ms: u64) -> Instant {
    let now = unix_ms();
    Instant::now() + Duration::from_millis(ms.saturating_sub(now))
}
