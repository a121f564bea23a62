//! Flag groups that several subcommands share: `--db` (and opening the store it
//! names), and the workload flags of `resplab bench` (also `resplab proto size`'s). A
//! subcommand's own flags stay in its `cmd/<sub>.rs`; nothing here knows a subcommand.

use clap::Args;
use resplab_engine::words::bench::BenchWords;
use std::path::PathBuf;

/// `--db`.
#[derive(Debug, Args)]
pub struct DbArg {
    /// The result store (SQLite).
    #[arg(long, default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
}

impl DbArg {
    /// Opens the result store, the error naming it.
    ///
    /// # Errors
    /// The store cannot be opened or created.
    pub fn open(&self) -> anyhow::Result<resplab_store::Store> {
        open_store(&self.db)
    }
}

/// Opens the result store at `path`, the error naming it.
///
/// # Errors
/// The store cannot be opened or created.
pub fn open_store(path: &std::path::Path) -> anyhow::Result<resplab_store::Store> {
    use anyhow::Context as _;
    resplab_store::Store::open(path)
        .with_context(|| format!("opening the result store {}", path.display()))
}

/// The workload flags of `resplab bench`, in redis-benchmark's and memtier_benchmark's
/// vocabulary; `resplab proto size` takes them with the same meaning.
#[derive(Debug, Args, Default)]
pub struct WorkloadArgs {
    /// Comma-separated redis-benchmark tests (set,get,lrange_100,…); default: its whole list.
    #[arg(short = 't', long, help_heading = "Workload (redis-benchmark)")]
    pub tests: Option<String>,
    /// Random keys in a keyspace of this size (redis-benchmark -r).
    #[arg(short = 'r', long, help_heading = "Workload (redis-benchmark)")]
    pub random_keys: Option<String>,
    /// Value size in bytes (redis-benchmark -d; memtier --data-size).
    #[arg(
        short = 'd',
        long,
        alias = "data-size",
        help_heading = "Workload (redis-benchmark)"
    )]
    pub data_size: Option<String>,

    /// SET:GET ratio of a memtier-style mix, e.g. 1:10.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub ratio: Option<String>,
    /// Key pattern for SET:GET, each R (uniform), S (sequential), G (gaussian), Z (zipf).
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_pattern: Option<String>,
    /// Smallest key number.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_minimum: Option<String>,
    /// Largest key number.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_maximum: Option<String>,
    /// Key name prefix.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_prefix: Option<String>,
    /// Median of the gaussian key pattern.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_median: Option<String>,
    /// Standard deviation of the gaussian key pattern.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_stddev: Option<String>,
    /// Exponent of the zipf key pattern.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_zipf_exp: Option<String>,
    /// Value sizes drawn uniformly from MIN-MAX bytes.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub data_size_range: Option<String>,
    /// Value sizes drawn from SIZE:WEIGHT,… .
    #[arg(long, help_heading = "Workload (memtier)")]
    pub data_size_list: Option<String>,
    /// An arbitrary command with __key__, __data__ and __rand_int__ placeholders
    /// (repeatable).
    #[arg(long = "command", help_heading = "Workload (memtier)")]
    pub commands: Vec<String>,
    /// Relative weight of each --command, in order (repeatable).
    #[arg(long = "command-ratio", help_heading = "Workload (memtier)")]
    pub command_ratios: Vec<String>,
    /// Key pattern of each --command, in order (repeatable).
    #[arg(long = "command-key-pattern", help_heading = "Workload (memtier)")]
    pub command_key_patterns: Vec<String>,
}

impl WorkloadArgs {
    /// The flags as the engine's words of a run, none of the others given.
    pub fn words(&self) -> BenchWords {
        BenchWords {
            tests: self.tests.clone(),
            random_keys: self.random_keys.clone(),
            data_size: self.data_size.clone(),
            ratio: self.ratio.clone(),
            key_pattern: self.key_pattern.clone(),
            key_minimum: self.key_minimum.clone(),
            key_maximum: self.key_maximum.clone(),
            key_prefix: self.key_prefix.clone(),
            key_median: self.key_median.clone(),
            key_stddev: self.key_stddev.clone(),
            key_zipf_exp: self.key_zipf_exp.clone(),
            data_size_range: self.data_size_range.clone(),
            data_size_list: self.data_size_list.clone(),
            commands: self.commands.clone(),
            command_ratios: self.command_ratios.clone(),
            command_key_patterns: self.command_key_patterns.clone(),
            ..BenchWords::default()
        }
    }
}
