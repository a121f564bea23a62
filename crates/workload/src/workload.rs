//! [`Workload`], [`Phase`] and [`Generator`]: a validated spec compiled for the hot path.
//!
//! [`Workload::new`] checks a [`WorkloadSpec`] and compiles it into phases. A phase is
//! a stretch of the run with its own request budget and its own results:
//! redis-benchmark's `-t set,get` is two phases run one after the other (`SET`, then
//! `GET`), while a memtier-style mix or a `--command` list is one phase in which several
//! commands interleave. [`Phase::commands`] names the commands of a phase; results are
//! kept per command name.
//!
//! The engine asks for one [`Generator`] per (phase, stream) — typically one stream per
//! connection. A generator owns its random generator (seeded from the master seed, the
//! phase and the stream, see [`crate::seed`]) and its key cursors, shares the compiled
//! templates and value pool of its phase read-only, and fills a caller-owned
//! [`Request`] with each call to [`Generator::next`]. After the request buffer has grown
//! to the workload's largest request, `next` allocates nothing.
//!
//! Generators are `Send`, so each worker thread can own the generators of its
//! connections; nothing is shared mutably between them.

use crate::catalog::payload;
use crate::cursor::CursorState;
use crate::error::WorkloadError;
use crate::keys::{
    patch_rand_int, slice_of, write_decimal, write_rand_int, KeyPattern, KeySampler, KeySpace,
};
use crate::replay::Choice;
use crate::request::Request;
use crate::seed::{derive_seed, stream_rng, SeedPurpose};
use crate::spec::{CommandsSpec, MixSpec, TestsSpec, WorkloadKind, WorkloadSpec};
use crate::template::{self, ArgTemplate, CompiledTemplate, Piece};
use crate::values::ValueSource;
use crate::wait::{WaitState, MAX_WAIT_REQUEST};
use rand::distributions::{Distribution, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// One stretch of a run with its own budget and results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Short, stable name (`"SET"`, `"LRANGE_100"`, `"MIX"`, `"COMMANDS"`).
    pub name: String,
    /// What redis-benchmark prints for the phase (`"LRANGE_100 (first 100 elements)"`,
    /// the `--csv` "test" column), or a readable description of a mix or command list.
    pub title: String,
    /// The commands of the phase; [`Generator::next`] returns an index into this list.
    /// Names are unique within a phase (a repeated command gets `#2`, `#3`, …).
    pub commands: Vec<String>,
}

/// A validated, compiled workload.
#[derive(Clone, Debug)]
pub struct Workload {
    spec: WorkloadSpec,
    phases: Vec<Phase>,
    compiled: Vec<Arc<CompiledPhase>>,
    setup: Vec<Request>,
    /// `(index, count)` when this process is one of several generators of the workload.
    shard: Option<(u64, u64)>,
    /// Every stream draws the same random sequence ([`Workload::with_shared_streams`]).
    shared_streams: bool,
}

/// The shared, read-only part of a phase.
#[derive(Debug)]
struct CompiledPhase {
    index: u64,
    seed: u64,
    commands: Vec<CompiledCommand>,
    /// Command indices of one ratio cycle, in sending order.
    cycle: Box<[u32]>,
    keys: KeySpace,
    values: ValueSource,
    rand_range: Option<u64>,
    /// A mix's WAITs (memtier's `--wait-ratio`); the phase's last command is `WAIT`.
    wait: Option<crate::spec::WaitSpec>,
}

#[derive(Debug)]
struct CompiledCommand {
    template: CompiledTemplate,
    pattern: KeyPattern,
    inline: bool,
    /// The whole request prepared in advance, when its layout never changes.
    image: Option<Image>,
    /// A mix's SET with an expiry range: the form it takes when it draws a time to live.
    expiring: Option<Box<Expiring>>,
    /// A replayed slot: each request is one of these lines instead of `template`.
    choice: Option<Box<Choice>>,
    /// A command following the cursor of its replies: each stream's starting state.
    cursor: Option<Box<CursorState>>,
}

/// The `SETEX` form of a SET and the times to live it draws from (memtier's
/// `--expiry-range`); a draw of 0 sends the plain form.
#[derive(Debug)]
struct Expiring {
    template: CompiledTemplate,
    ttl_sec: Uniform<u64>,
}

/// A request whose bytes are the same every time except for fixed-width
/// `__rand_int__` fields: copied whole, then patched in place (what redis-benchmark
/// does with its command buffer). Used when a command has no `__key__` and its
/// `__data__`, if any, is the same in every request (the redis-benchmark catalog).
#[derive(Debug)]
struct Image {
    bytes: Box<[u8]>,
    ends: Box<[usize]>,
    /// Offsets of the 12-byte `__rand_int__` fields in `bytes`.
    slots: Box<[usize]>,
    /// Offsets of the 5-byte `__tag__` fields in `bytes` (one value per request).
    tags: Box<[usize]>,
}

impl Image {
    fn build(t: &CompiledTemplate, values: &ValueSource) -> Option<Image> {
        if t.uses_key {
            return None;
        }
        let fixed_data: Option<&[u8]> = match values {
            ValueSource::Fixed(b) => Some(b),
            ValueSource::Pool { .. } => None,
        };
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        let mut slots = Vec::new();
        let mut tags = Vec::new();
        for arg in &t.args {
            match arg {
                ArgTemplate::Fixed(b) => bytes.extend_from_slice(b),
                ArgTemplate::Pieces(pieces) => {
                    for p in pieces.iter() {
                        match p {
                            Piece::Lit(b) => bytes.extend_from_slice(b),
                            Piece::RandInt => {
                                slots.push(bytes.len());
                                bytes.extend_from_slice(b"000000000000");
                            }
                            Piece::Data => bytes.extend_from_slice(fixed_data?),
                            Piece::Tag => {
                                tags.push(bytes.len());
                                bytes.extend_from_slice(b"00000");
                            }
                            Piece::Key | Piece::Ttl => return None,
                        }
                    }
                }
            }
            ends.push(bytes.len());
        }
        Some(Image {
            bytes: bytes.into_boxed_slice(),
            ends: ends.into_boxed_slice(),
            slots: slots.into_boxed_slice(),
            tags: tags.into_boxed_slice(),
        })
    }
}

impl CompiledCommand {
    fn new(template: CompiledTemplate, pattern: KeyPattern, inline: bool) -> Self {
        CompiledCommand {
            template,
            pattern,
            inline,
            image: None,
            expiring: None,
            choice: None,
            cursor: None,
        }
    }
}

impl CompiledPhase {
    /// Prepares the request images of the commands that allow one.
    fn with_images(mut self) -> Self {
        for c in &mut self.commands {
            if c.choice.is_none() {
                c.image = Image::build(&c.template, &self.values);
            }
        }
        self
    }
}

impl Workload {
    /// Validates and compiles `spec`.
    ///
    /// # Errors
    /// Whatever [`WorkloadSpec::validate`] reports.
    pub fn new(spec: &WorkloadSpec) -> Result<Workload, WorkloadError> {
        spec.validate()?;
        let seed = spec.seed;
        let mut phases = Vec::new();
        let mut compiled = Vec::new();
        match &spec.kind {
            WorkloadKind::Tests(t) => compile_tests(t, seed, &mut phases, &mut compiled)?,
            WorkloadKind::Mix(m) => compile_mix(m, seed, &mut phases, &mut compiled)?,
            WorkloadKind::Commands(c) => compile_commands(c, seed, &mut phases, &mut compiled)?,
        }
        let mut setup = Vec::new();
        for line in &spec.setup_commands {
            let mut req = Request::new();
            for arg in template::split_args(line, "setup command")? {
                req.push_arg(&arg);
            }
            setup.push(req);
        }
        Ok(Workload {
            spec: spec.clone(),
            phases,
            compiled,
            setup,
            shard: None,
            shared_streams: false,
        })
    }

    /// This workload as generator `index` of `count` (`resplab bench --shard`): the
    /// sequential (`S`) and parallel (`P`) key patterns walk only this shard's contiguous
    /// slice of the key range, so shards never write the same sequential keys; the
    /// random patterns keep the whole range (they differ by seed, which the caller
    /// derives per shard).
    ///
    /// # Errors
    /// `count` is 0 or `index` is not below it.
    pub fn with_shard(mut self, index: u64, count: u64) -> Result<Workload, WorkloadError> {
        if count == 0 || index >= count {
            return Err(WorkloadError::new(
                "--shard",
                format!("{}/{count}", index + 1),
                "I/N with 1 <= I <= N",
            ));
        }
        self.shard = (count > 1).then_some((index, count));
        Ok(self)
    }

    /// This workload for a Redis Cluster: the catalog's multi-key tests (`MSET (10
    /// keys)`, `MGET (10 keys)`) put a hash tag drawn per request in every key
    /// (`key:{NNNNN}:__rand_int__`), so the keys of one request share a slot (a cluster
    /// refuses a request across slots) while requests spread over every slot.
    /// Single-key commands are unchanged: their keys route by themselves.
    ///
    /// # Errors
    /// When a tagged template does not compile (it always does).
    pub fn with_cluster_tags(mut self) -> Result<Workload, WorkloadError> {
        let WorkloadKind::Tests(t) = &self.spec.kind else {
            return Ok(self);
        };
        let random = t.random_keyspace.is_some();
        for (i, test) in t.tests.iter().enumerate() {
            let Some(tagged) = test.cluster_template() else {
                continue;
            };
            let Some(old) = self.compiled.get(i) else {
                continue;
            };
            let tpl = template::compile(tagged, "-t", random)?;
            let phase = CompiledPhase {
                index: old.index,
                seed: old.seed,
                commands: vec![CompiledCommand::new(
                    tpl,
                    KeyPattern::Random,
                    test.is_inline(),
                )],
                cycle: old.cycle.clone(),
                keys: old.keys.clone(),
                values: old.values.clone(),
                rand_range: old.rand_range,
                wait: None,
            }
            .with_images();
            self.compiled[i] = Arc::new(phase);
        }
        Ok(self)
    }

    /// This workload with one random sequence for every stream: each connection draws
    /// the same keys, sizes and values in the same order (memtier_benchmark's default;
    /// its `--distinct-client-seed` gives each client its own, as resplab does without
    /// this). Key cursors of the sequential and parallel patterns stay per stream.
    pub fn with_shared_streams(mut self) -> Workload {
        self.shared_streams = true;
        self
    }

    /// `(index, count)` of this generator, when sharded.
    pub fn shard(&self) -> Option<(u64, u64)> {
        self.shard
    }

    /// The spec this workload was compiled from.
    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.spec.seed
    }

    /// The phases, in the order they run.
    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }

    /// Requests to send once, unmeasured, before `phase` starts: the spec's
    /// `setup_commands` (sent as written, placeholders not substituted) before phase 0,
    /// nothing before the others. redis-benchmark's own preparation step, the LPUSH
    /// that fills the list for the LRANGE tests, is a measured phase of its own
    /// ([`crate::TestName::LpushForLrange`]), as redis-benchmark reports it.
    pub fn setup_requests(&self, phase: usize) -> &[Request] {
        if phase == 0 {
            &self.setup
        } else {
            &[]
        }
    }

    /// The first `per_phase` requests of stream 0 of every phase, in run order, each
    /// with its row label: the phase's name, or the command's name when the phase mixes
    /// several (what `proto size` measures of a bench workload).
    pub fn labelled_requests(&self, per_phase: usize) -> Vec<(String, Request)> {
        let mut out = Vec::new();
        for (p, phase) in self.phases.iter().enumerate() {
            let mut gen = self.generator(p, 0);
            for _ in 0..per_phase {
                let mut req = Request::new();
                let i = gen.next(&mut req);
                let label = match phase.commands.as_slice() {
                    [_] => phase.name.clone(),
                    many => many.get(i).cloned().unwrap_or_else(|| phase.name.clone()),
                };
                out.push((label, req));
            }
        }
        out
    }

    /// A generator for stream `stream` of `phase`, the only stream of the parallel key
    /// pattern's split (use [`Workload::generator_partitioned`] when several streams
    /// should share out a key range with the `P` pattern).
    ///
    /// A `phase` past the last one is taken modulo the number of phases.
    pub fn generator(&self, phase: usize, stream: u64) -> Generator {
        self.generator_partitioned(phase, stream, 1)
    }

    /// A generator for stream `stream` of `streams` of `phase`. Streams only differ in
    /// their random seeds, except under the parallel (`P`) key pattern, where stream
    /// `stream` walks slice `stream` of `streams` of the key range.
    pub fn generator_partitioned(&self, phase: usize, stream: u64, streams: u64) -> Generator {
        let phase = Arc::clone(&self.compiled[phase % self.compiled.len()]);
        let samplers = phase
            .commands
            .iter()
            .map(|c| match (self.shard, c.pattern) {
                (Some((index, count)), KeyPattern::Sequential | KeyPattern::Parallel) => {
                    let (lo, hi) = slice_of(phase.keys.minimum, phase.keys.maximum, index, count);
                    let keys = KeySpace {
                        minimum: lo,
                        maximum: hi,
                        ..phase.keys.clone()
                    };
                    KeySampler::new(c.pattern, &keys, stream, streams)
                }
                _ => KeySampler::new(c.pattern, &phase.keys, stream, streams),
            })
            .collect();
        let rand_int = phase.rand_range.map(|n| Uniform::new(0, n.max(1)));
        let rng_stream = if self.shared_streams { 0 } else { stream };
        let rng = stream_rng(phase.seed, SeedPurpose::Requests, phase.index, rng_stream);
        let wait = phase.wait.as_ref().map(WaitState::new);
        let cursor = phase.commands.iter().find_map(|c| c.cursor.clone());
        Generator {
            phase,
            rng,
            samplers,
            rand_int,
            cycle_pos: 0,
            wait,
            cursor,
        }
    }
}

/// Upper-case first word of a template: the command's name.
pub(crate) fn command_name(t: &CompiledTemplate) -> String {
    match t.args.first() {
        Some(ArgTemplate::Fixed(b)) => String::from_utf8_lossy(b).to_ascii_uppercase(),
        _ => "COMMAND".to_string(),
    }
}

fn unique_name(existing: &[String], base: &str) -> String {
    if !existing.iter().any(|n| n == base) {
        return base.to_string();
    }
    (2..)
        .map(|i| format!("{base}#{i}"))
        .find(|n| !existing.contains(n))
        .unwrap_or_else(|| base.to_string())
}

/// A mix's SET, in its commands and cycle.
const SET_COMMAND: u32 = 0;
/// A mix's WAIT, the last of its [`Phase::commands`] when it sends some.
const WAIT_COMMAND: usize = 2;

/// Makes the requests of one stream of one phase. See the module docs.
#[derive(Clone, Debug)]
pub struct Generator {
    phase: Arc<CompiledPhase>,
    rng: Xoshiro256PlusPlus,
    samplers: Vec<KeySampler>,
    rand_int: Option<Uniform<u64>>,
    cycle_pos: usize,
    /// The stream's WAITs, when its mix sends some.
    wait: Option<WaitState>,
    /// The stream's place in a cursor iteration, when its command follows one.
    cursor: Option<Box<CursorState>>,
}

impl Generator {
    /// Clears `req`, fills it with the next request of this stream, and returns the
    /// index of its command in the phase's [`Phase::commands`].
    #[inline]
    pub fn next(&mut self, req: &mut Request) -> usize {
        let Generator {
            phase,
            rng,
            samplers,
            rand_int,
            cycle_pos,
            wait,
            cursor,
        } = self;
        if let Some(c) = cursor.as_deref().filter(|c| c.is_following()) {
            return c.write(req);
        }
        if let Some(w) = wait.as_mut() {
            if w.is_due() {
                w.write(req, rng);
                return WAIT_COMMAND;
            }
            if phase.cycle.get(*cycle_pos) == Some(&SET_COMMAND) {
                w.count_set();
            }
        }
        let idx = match phase.cycle.len() {
            0 | 1 => phase.cycle.first().copied().unwrap_or(0) as usize,
            len => {
                let i = phase.cycle[*cycle_pos] as usize;
                *cycle_pos += 1;
                if *cycle_pos == len {
                    *cycle_pos = 0;
                }
                i
            }
        };
        req.clear();
        let Some(cmd) = phase.commands.get(idx) else {
            return idx;
        };
        req.set_inline(cmd.inline);
        if let Some(choice) = &cmd.choice {
            let (template, row) = choice.pick(rng);
            let key = match samplers.get_mut(idx) {
                Some(s) if template.uses_key => s.next(rng),
                _ => 0,
            };
            let fields = Fields {
                key,
                ttl_sec: 0,
                tag: None,
            };
            write_args(template, req, phase, rng, rand_int.as_ref(), fields);
            return row;
        }
        if let Some(image) = &cmd.image {
            req.load(&image.bytes, &image.ends);
            if !image.slots.is_empty() {
                let buf = req.bytes_mut();
                for &at in image.slots.iter() {
                    let n = rand_int.as_ref().map_or(0, |u| u.sample(rng));
                    if let Some(slot) = buf.get_mut(at..at + 12) {
                        patch_rand_int(slot, n);
                    }
                }
            }
            if !image.tags.is_empty() {
                let tag = draw_tag(rng);
                let buf = req.bytes_mut();
                for &at in image.tags.iter() {
                    if let Some(field) = buf.get_mut(at..at + 5) {
                        patch_tag(field, tag);
                    }
                }
            }
            return idx;
        }
        let key = if cmd.template.uses_key {
            samplers.get_mut(idx).map_or(0, |s| s.next(rng))
        } else {
            0
        };
        let (template, ttl_sec) = match &cmd.expiring {
            Some(e) => match e.ttl_sec.sample(rng) {
                0 => (&cmd.template, 0),
                ttl => (&e.template, ttl),
            },
            None => (&cmd.template, 0),
        };
        let fields = Fields {
            key,
            ttl_sec,
            tag: None,
        };
        write_args(template, req, phase, rng, rand_int.as_ref(), fields);
        idx
    }

    /// The largest request this generator can produce: (argument bytes, arguments).
    pub fn max_request_size(&self) -> (usize, usize) {
        let phase = &self.phase;
        let max_value = phase.values.max_len();
        let mut most = (0, 0);
        let templates = phase.commands.iter().flat_map(|c| {
            let replayed = c.choice.iter().flat_map(|ch| ch.templates.iter());
            std::iter::once(&c.template)
                .chain(c.expiring.as_ref().map(|e| &e.template))
                .chain(replayed)
        });
        for template in templates {
            let mut bytes = 0usize;
            for arg in &template.args {
                bytes = bytes.saturating_add(match arg {
                    ArgTemplate::Fixed(b) => b.len(),
                    ArgTemplate::Pieces(pieces) => pieces
                        .iter()
                        .map(|p| match p {
                            Piece::Lit(b) => b.len(),
                            // u64::MAX has 20 decimal digits.
                            Piece::Key => phase.keys.prefix.len() + 20,
                            Piece::Data => max_value,
                            Piece::RandInt => 12,
                            Piece::Tag => 5,
                            Piece::Ttl => 20,
                        })
                        .fold(0usize, usize::saturating_add),
                });
            }
            most.0 = most.0.max(bytes);
            most.1 = most.1.max(template.args.len());
        }
        if self.wait.is_some() {
            most = (
                most.0.max(MAX_WAIT_REQUEST.0),
                most.1.max(MAX_WAIT_REQUEST.1),
            );
        }
        if let Some((bytes, args)) = self.cursor.as_ref().map(|c| c.max_request_size()) {
            most = (most.0.max(bytes), most.1.max(args));
        }
        most
    }

    /// Grows `req` to [`Generator::max_request_size`], so that no later call to
    /// [`Generator::next`] with it allocates, even for the largest request.
    pub fn reserve(&self, req: &mut Request) {
        let (bytes, args) = self.max_request_size();
        req.reserve_total(bytes, args);
    }

    /// Number of commands in the generator's phase.
    pub fn command_count(&self) -> usize {
        self.phase.commands.len()
    }

    /// Whether this stream's requests follow the cursor of their replies
    /// ([`crate::CommandSpec::follow_cursor`]): the caller then hands each reply's
    /// cursor to [`Generator::take_cursor`], in order.
    pub fn follows_cursor(&self) -> bool {
        self.cursor.is_some()
    }

    /// The reply to a request of this stream that [`Generator::next`] returned `row`
    /// for: the cursor it carries (the first element of its array), or `None` for an
    /// error reply or one without a cursor (the iteration starts again).
    pub fn take_cursor(&mut self, row: usize, cursor: Option<&[u8]>) {
        if let Some(c) = self.cursor.as_deref_mut() {
            c.take(row, cursor);
        }
    }
}

/// What one request's placeholders are filled with, besides the value.
struct Fields {
    /// The key number of `__key__`.
    key: u64,
    /// The time to live of a `SETEX`, seconds.
    ttl_sec: u64,
    /// The request's tag, drawn at its first `__tag__`.
    tag: Option<u64>,
}

/// Appends the arguments of `template` to `req`, its placeholders filled from
/// `fields`, the phase's values and `rng`.
#[inline]
fn write_args(
    template: &CompiledTemplate,
    req: &mut Request,
    phase: &CompiledPhase,
    rng: &mut Xoshiro256PlusPlus,
    rand_int: Option<&Uniform<u64>>,
    mut fields: Fields,
) {
    for arg in &template.args {
        match arg {
            ArgTemplate::Fixed(bytes) => req.push_arg(bytes),
            ArgTemplate::Pieces(pieces) => req.push_arg_with(|w| {
                let out = w.buffer();
                for piece in pieces.iter() {
                    match piece {
                        Piece::Lit(bytes) => out.extend_from_slice(bytes),
                        Piece::Key => {
                            out.extend_from_slice(phase.keys.prefix.as_bytes());
                            write_decimal(out, fields.key);
                        }
                        Piece::Data => phase.values.write(out, rng, fields.key),
                        Piece::RandInt => {
                            let n = rand_int.map_or(0, |u| u.sample(rng));
                            write_rand_int(out, n);
                        }
                        Piece::Tag => {
                            let t = *fields.tag.get_or_insert_with(|| draw_tag(rng));
                            let at = out.len();
                            out.extend_from_slice(b"00000");
                            patch_tag(&mut out[at..], t);
                        }
                        Piece::Ttl => write_decimal(out, fields.ttl_sec),
                    }
                }
            }),
        }
    }
}

/// A hash tag value in `0..16384` (16384 divides 2^64: no bias).
#[inline]
fn draw_tag(rng: &mut Xoshiro256PlusPlus) -> u64 {
    rand::RngCore::next_u64(rng) % 16384
}

/// Writes `tag` as five zero-padded digits into `field`.
#[inline]
fn patch_tag(field: &mut [u8], mut tag: u64) {
    for b in field.iter_mut().rev() {
        *b = b'0' + (tag % 10) as u8;
        tag /= 10;
    }
}

/// redis-benchmark's tests: one phase per test, in order, each of one command.
fn compile_tests(
    t: &TestsSpec,
    seed: u64,
    phases: &mut Vec<Phase>,
    compiled: &mut Vec<Arc<CompiledPhase>>,
) -> Result<(), WorkloadError> {
    let data: Arc<[u8]> = payload(t.data_size).into();
    let random = t.random_keyspace.is_some();
    for (i, test) in t.tests.iter().enumerate() {
        let tpl = template::compile(test.template(random), "-t", random)?;
        phases.push(Phase {
            name: test.name().to_string(),
            title: test.title().to_string(),
            commands: vec![test.name().to_string()],
        });
        compiled.push(Arc::new(
            CompiledPhase {
                index: i as u64,
                seed,
                commands: vec![CompiledCommand::new(
                    tpl,
                    KeyPattern::Random,
                    test.is_inline(),
                )],
                cycle: Box::new([0]),
                keys: KeySpace::default(),
                values: ValueSource::Fixed(data.clone()),
                rand_range: t.random_keyspace,
                wait: None,
            }
            .with_images(),
        ));
    }
    Ok(())
}

/// A SET:GET mix: one phase cycling through `ratio.set` SETs and `ratio.get` GETs.
fn compile_mix(
    m: &MixSpec,
    seed: u64,
    phases: &mut Vec<Phase>,
    compiled: &mut Vec<Arc<CompiledPhase>>,
) -> Result<(), WorkloadError> {
    let set = template::compile("SET __key__ __data__", "--ratio", false)?;
    let get = template::compile("GET __key__", "--ratio", false)?;
    let mut set = CompiledCommand::new(set, m.set_pattern, false);
    set.expiring = m.expiry.map(|e| {
        Box::new(Expiring {
            template: template::setex(),
            ttl_sec: Uniform::new_inclusive(e.min_sec, e.max_sec.max(e.min_sec)),
        })
    });
    let mut cycle = vec![0u32; m.ratio.set as usize];
    cycle.resize(cycle.len() + m.ratio.get as usize, 1u32);
    phases.push(Phase {
        name: "MIX".to_string(),
        title: format!(
            "SET:GET {}:{} (keys {}:{}{})",
            m.ratio.set,
            m.ratio.get,
            m.set_pattern.letter(),
            m.get_pattern.letter(),
            m.expiry.map_or(String::new(), |e| format!(
                ", expiry {}-{} s",
                e.min_sec, e.max_sec
            )) + &m.wait.map_or(String::new(), |w| format!(
                ", SET:WAIT {}:{}",
                w.sets, w.waits
            ))
        ),
        commands: if m.wait.is_some() {
            vec!["SET".to_string(), "GET".to_string(), "WAIT".to_string()]
        } else {
            vec!["SET".to_string(), "GET".to_string()]
        },
    });
    compiled.push(Arc::new(
        CompiledPhase {
            index: 0,
            seed,
            commands: vec![set, CompiledCommand::new(get, m.get_pattern, false)],
            cycle: cycle.into_boxed_slice(),
            keys: m.keys.clone(),
            values: ValueSource::pool(
                &m.values,
                &m.keys,
                derive_seed(seed, SeedPurpose::Values, 0, 0),
            ),
            rand_range: None,
            wait: m.wait,
        }
        .with_images(),
    ));
    Ok(())
}

/// The lines of replayed slot `own`, each given the row of its command name: the
/// slot's own row for its first line's name, a row added after every command's for
/// each further name.
fn replay_rows(
    replay: &crate::spec::Replay,
    rand: bool,
    own: usize,
    names: &mut Vec<String>,
) -> Result<Choice, WorkloadError> {
    let mut rows: Vec<(String, usize)> = Vec::new();
    Choice::new(replay, rand, |name| {
        if let Some((_, row)) = rows.iter().find(|(n, _)| n == name) {
            return *row;
        }
        let row = if rows.is_empty() {
            own
        } else {
            names.push(unique_name(names, name));
            names.len() - 1
        };
        rows.push((name.to_string(), row));
        row
    })
}

/// Command templates: one phase cycling through the commands by their ratios.
fn compile_commands(
    c: &CommandsSpec,
    seed: u64,
    phases: &mut Vec<Phase>,
    compiled: &mut Vec<Arc<CompiledPhase>>,
) -> Result<(), WorkloadError> {
    let rand = c.random_keyspace.is_some();
    let mut commands = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut cycle = Vec::new();
    for (i, cmd) in c.commands.iter().enumerate() {
        let mut tpl = template::compile(&cmd.template, "--command", rand)?;
        cycle.resize(cycle.len() + cmd.ratio as usize, i as u32);
        if let Some(first) = cmd.replay.as_ref().and_then(|r| r.lines.first()) {
            // A replayed slot's own row is named after its first line.
            tpl = template::compile(first, "--command", rand)?;
        }
        let name = command_name(&tpl);
        match cmd.follow_cursor {
            Some(_) => names.push(unique_name(&names, &format!("{name} 0"))),
            None => names.push(unique_name(&names, &name)),
        }
        commands.push(CompiledCommand::new(tpl, cmd.key_pattern, false));
    }
    for (i, cmd) in c.commands.iter().enumerate() {
        if let Some(max) = cmd.follow_cursor {
            let args = template::split_args(&cmd.template, "--command")?;
            let name = command_name(&commands[i].template);
            names.push(unique_name(&names, &format!("{name} <cursor>")));
            let state = CursorState::new(&args, max, names.len() - 1);
            commands[i].cursor = Some(Box::new(state));
        }
    }
    for (i, cmd) in c.commands.iter().enumerate() {
        if let Some(replay) = &cmd.replay {
            commands[i].choice = Some(Box::new(replay_rows(replay, rand, i, &mut names)?));
        }
    }
    let title: Vec<&str> = c.commands.iter().map(|c| c.template.as_str()).collect();
    phases.push(Phase {
        name: "COMMANDS".to_string(),
        title: title.join("; "),
        commands: names,
    });
    compiled.push(Arc::new(
        CompiledPhase {
            index: 0,
            seed,
            commands,
            cycle: cycle.into_boxed_slice(),
            keys: c.keys.clone(),
            values: ValueSource::pool(
                &c.values,
                &c.keys,
                derive_seed(seed, SeedPurpose::Values, 0, 0),
            ),
            rand_range: c.random_keyspace,
            wait: None,
        }
        .with_images(),
    ));
    Ok(())
}

#[cfg(test)]
mod tests;
