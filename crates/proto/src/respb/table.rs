//! The RESPB opcode table: every command the RESPB digest lists, with its opcode and the
//! layout of its payload expressed as a list of [`F`] fields.
//!
//! A layout is read two ways. On the wire it is the sequence of fixed-width and
//! length-prefixed fields of the frame. Against a RESP command it says which arguments
//! fill which field: fields take arguments in order, keywords and counts that RESP spells
//! out (`FIELDS`, `numkeys`) are re-created on the way back. Where the digest leaves a
//! layout undefined (`b[..]` subcommands, "complex options"), the layout is a generic
//! argument list; docs/respb.md lists every such resolution and why.

/// One field of a payload layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F {
    /// `[u16 len][bytes]`, one argument; length 0xFFFF is reserved for "absent".
    S,
    /// `[u32 len][bytes]`, one argument; length 0xFFFFFFFF is reserved for "absent".
    V,
    /// Big-endian int64 from one decimal argument; i64::MIN is reserved for "absent".
    I,
    /// Big-endian IEEE-754 binary64 from one argument.
    D,
    /// Big-endian u16 from one decimal argument; 0xFFFF is reserved for "absent".
    W,
    /// One byte from one decimal argument (0..=255); 0 means "absent" where optional.
    U8,
    /// One byte: the index of the argument in this keyword list (required).
    Kw(&'static [&'static str]),
    /// One byte of flag bits, from the keyword arguments that match the table; decoded
    /// in table order.
    Flags(&'static [(&'static str, u8)]),
    /// A flags byte followed by an always-present int64 that carries the value of the one
    /// flag that takes a value (0 when none). Entries: keyword, bit, takes a value.
    FlagsExp(&'static [(&'static str, u8, bool)]),
    /// A literal keyword argument that takes no bytes on the wire.
    Lit(&'static str),
    /// `[u16 count]` and `count` repetitions of the group, taking the remaining
    /// arguments (less those the fields after it need).
    Rest(&'static [F]),
    /// Like [`F::Rest`], but RESP spells the count as an argument (`numkeys`).
    NumArg(&'static [F]),
    /// A positional optional scalar, present when more arguments remain than the fields
    /// after it need; absent is written as the scalar's sentinel.
    Opt(&'static F),
    /// An optional keyword with its value scalars (`LIMIT offset count`); absent is
    /// written as the scalars' sentinels.
    OptKw(&'static str, &'static [F]),
}

/// Where a command lives in the opcode space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A core command: 4-byte header `[op][mux]`.
    Core(u16),
    /// A module command: 8-byte header `[0xF000][mux][module<<16 | command]`.
    Module(u32),
}

/// One command of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// The command name as RESP spells it (upper case).
    pub name: &'static str,
    /// Its opcode.
    pub op: Op,
    /// Its payload layout.
    pub layout: &'static [F],
}

use F::*;

const K: &[F] = &[S];
const KK: &[F] = &[S, S];
const KKK: &[F] = &[S, S, S];
const KV: &[F] = &[S, V];
const KI: &[F] = &[S, I];
const KII: &[F] = &[S, I, I];
const NONE: &[F] = &[];
const KEYS: &[F] = &[Rest(K)];
const K_KEYS: &[F] = &[S, Rest(K)];
const K_PAIRS: &[F] = &[S, Rest(KV)];
const ARGS: &[F] = &[Rest(K)];
const EXPIRE: &[F] = &[S, I, Flags(GENERIC)];
const GENERIC: &[(&str, u8)] = &[("NX", 0x01), ("XX", 0x02), ("GT", 0x04), ("LT", 0x08)];
const WITHSCORES: &[(&str, u8)] = &[("WITHSCORES", 0x01)];
const LR: &[&str] = &["LEFT", "RIGHT"];
const MINMAX: &[&str] = &["MIN", "MAX"];
const COUNT_W: F = OptKw("COUNT", &[W]);
const COUNT_I: F = OptKw("COUNT", &[I]);
const MATCH: F = OptKw("MATCH", &[S]);
const LIMIT1: F = OptKw("LIMIT", &[I]);
const LIMIT2: F = OptKw("LIMIT", &[I, I]);
const OPT_W: F = Opt(&W);
const OPT_S: F = Opt(&S);
const OPT_I: F = Opt(&I);
const SET_FLAGS: &[(&str, u8, bool)] = &[
    ("NX", 0x01, false),
    ("XX", 0x02, false),
    ("GET", 0x20, false),
    ("EX", 0x04, true),
    ("PX", 0x08, true),
    ("EXAT", 0x40, true),
    ("PXAT", 0x80, true),
    ("KEEPTTL", 0x10, false),
];
const GETEX_FLAGS: &[(&str, u8, bool)] = &[
    ("EX", 0x04, true),
    ("PX", 0x08, true),
    ("EXAT", 0x40, true),
    ("PXAT", 0x80, true),
    ("PERSIST", 0x10, false),
];
const HSETEX_FLAGS: &[(&str, u8, bool)] = &[
    ("FNX", 0x01, false),
    ("FXX", 0x02, false),
    ("EX", 0x04, true),
    ("PX", 0x08, true),
    ("EXAT", 0x40, true),
    ("PXAT", 0x80, true),
    ("KEEPTTL", 0x10, false),
];
const HEXPIRE: &[F] = &[S, I, Flags(GENERIC), Lit("FIELDS"), NumArg(K)];
const HFIELDS: &[F] = &[S, Lit("FIELDS"), NumArg(K)];
const ZRANGE_FLAGS: &[(&str, u8)] = &[
    ("BYSCORE", 0x04),
    ("BYLEX", 0x08),
    ("REV", 0x02),
    ("WITHSCORES", 0x01),
];
const GEO_UNITS: &[&str] = &["M", "KM", "FT", "MI"];
const GEORADIUS_FLAGS: &[(&str, u8)] = &[
    ("WITHCOORD", 0x01),
    ("WITHDIST", 0x02),
    ("WITHHASH", 0x04),
    ("ASC", 0x08),
    ("DESC", 0x10),
];
const RESTORE: &[F] = &[S, I, V, Flags(&[("REPLACE", 0x01), ("ABSTTL", 0x02)])];
const POP_COUNT: &[F] = &[S, OPT_W];
const SCAN_K: &[F] = &[S, I, MATCH, COUNT_I];
const LEX_RANGE: &[F] = &[S, S, S, LIMIT2];
const JSON_KEY_PATH: &[F] = &[S, OPT_S];
const LMPOP: &[F] = &[NumArg(K), Kw(LR), COUNT_W];
const ZMPOP: &[F] = &[NumArg(K), Kw(MINMAX), COUNT_W];
const BLOCKING_POP: &[F] = &[Rest(K), I];

const fn core(name: &'static str, op: u16, layout: &'static [F]) -> Command {
    Command {
        name,
        op: Op::Core(op),
        layout,
    }
}

const fn module(name: &'static str, sub: u32, layout: &'static [F]) -> Command {
    Command {
        name,
        op: Op::Module(sub),
        layout,
    }
}

/// Every core command, sorted by opcode.
pub static CORE: &[Command] = &[
    // Strings 0x0000-0x003F.
    core("GET", 0x0000, K),
    core("SET", 0x0001, &[S, V, FlagsExp(SET_FLAGS)]),
    core("APPEND", 0x0002, KV),
    core("DECR", 0x0003, K),
    core("DECRBY", 0x0004, KI),
    core("GETDEL", 0x0005, K),
    core("GETEX", 0x0006, &[S, FlagsExp(GETEX_FLAGS)]),
    core("GETRANGE", 0x0007, KII),
    core("GETSET", 0x0008, KV),
    core("INCR", 0x0009, K),
    core("INCRBY", 0x000A, KI),
    core("INCRBYFLOAT", 0x000B, &[S, D]),
    core("MGET", 0x000C, KEYS),
    core("MSET", 0x000D, &[Rest(KV)]),
    core("MSETNX", 0x000E, &[Rest(KV)]),
    core("PSETEX", 0x000F, &[S, I, V]),
    core("SETEX", 0x0010, &[S, I, V]),
    core("SETNX", 0x0011, KV),
    core("SETRANGE", 0x0012, &[S, I, V]),
    core("STRLEN", 0x0013, K),
    core("SUBSTR", 0x0014, KII),
    core(
        "LCS",
        0x0015,
        &[
            S,
            S,
            Flags(&[("LEN", 0x01), ("IDX", 0x02), ("WITHMATCHLEN", 0x04)]),
        ],
    ),
    core("DELIFEQ", 0x0016, KV),
    // Lists 0x0040-0x007F.
    core("LPUSH", 0x0040, K_KEYS),
    core("RPUSH", 0x0041, K_KEYS),
    core("LPOP", 0x0042, POP_COUNT),
    core("RPOP", 0x0043, POP_COUNT),
    core("LLEN", 0x0044, K),
    core("LRANGE", 0x0045, KII),
    core("LINDEX", 0x0046, KI),
    core("LSET", 0x0047, &[S, I, S]),
    core("LREM", 0x0048, &[S, I, S]),
    core("LTRIM", 0x0049, KII),
    core("LINSERT", 0x004A, &[S, Kw(&["BEFORE", "AFTER"]), S, S]),
    core("LPUSHX", 0x004B, K_KEYS),
    core("RPUSHX", 0x004C, K_KEYS),
    core("RPOPLPUSH", 0x004D, KK),
    core("LMOVE", 0x004E, &[S, S, Kw(LR), Kw(LR)]),
    core("LMPOP", 0x004F, LMPOP),
    core(
        "LPOS",
        0x0050,
        &[S, S, OptKw("RANK", &[I]), COUNT_W, OptKw("MAXLEN", &[I])],
    ),
    core("BLPOP", 0x0051, BLOCKING_POP),
    core("BRPOP", 0x0052, BLOCKING_POP),
    core("BRPOPLPUSH", 0x0053, &[S, S, I]),
    core("BLMOVE", 0x0054, &[S, S, Kw(LR), Kw(LR), I]),
    core("BLMPOP", 0x0055, &[I, NumArg(K), Kw(LR), COUNT_W]),
    // Sets 0x0080-0x00BF.
    core("SADD", 0x0080, K_KEYS),
    core("SREM", 0x0081, K_KEYS),
    core("SMEMBERS", 0x0082, K),
    core("SISMEMBER", 0x0083, KK),
    core("SCARD", 0x0084, K),
    core("SPOP", 0x0085, POP_COUNT),
    core("SRANDMEMBER", 0x0086, &[S, OPT_I]),
    core("SINTER", 0x0087, KEYS),
    core("SINTERSTORE", 0x0088, K_KEYS),
    core("SUNION", 0x0089, KEYS),
    core("SUNIONSTORE", 0x008A, K_KEYS),
    core("SDIFF", 0x008B, KEYS),
    core("SDIFFSTORE", 0x008C, K_KEYS),
    core("SMOVE", 0x008D, KKK),
    core("SSCAN", 0x008E, SCAN_K),
    core("SINTERCARD", 0x008F, &[NumArg(K), LIMIT1]),
    core("SMISMEMBER", 0x0090, K_KEYS),
    // Sorted sets 0x00C0-0x00FF.
    core(
        "ZADD",
        0x00C0,
        &[
            S,
            Flags(&[
                ("NX", 0x01),
                ("XX", 0x02),
                ("GT", 0x04),
                ("LT", 0x08),
                ("CH", 0x10),
                ("INCR", 0x20),
            ]),
            Rest(&[D, S]),
        ],
    ),
    core("ZREM", 0x00C1, K_KEYS),
    core("ZCARD", 0x00C2, K),
    core("ZCOUNT", 0x00C3, &[S, D, D]),
    core("ZINCRBY", 0x00C4, &[S, D, S]),
    core("ZRANGE", 0x00C5, &[S, I, I, Flags(ZRANGE_FLAGS)]),
    core("ZRANGEBYSCORE", 0x00C6, &[S, D, D, Flags(WITHSCORES)]),
    core("ZRANGEBYLEX", 0x00C7, LEX_RANGE),
    core("ZREVRANGE", 0x00C8, &[S, I, I, Flags(WITHSCORES)]),
    core(
        "ZREVRANGEBYSCORE",
        0x00C9,
        &[S, D, D, Flags(WITHSCORES), LIMIT2],
    ),
    core("ZREVRANGEBYLEX", 0x00CA, LEX_RANGE),
    core("ZRANK", 0x00CB, &[S, S, Flags(&[("WITHSCORE", 0x01)])]),
    core("ZREVRANK", 0x00CC, &[S, S, Flags(&[("WITHSCORE", 0x01)])]),
    core("ZSCORE", 0x00CD, KK),
    core("ZMSCORE", 0x00CE, K_KEYS),
    core("ZREMRANGEBYRANK", 0x00CF, KII),
    core("ZREMRANGEBYSCORE", 0x00D0, &[S, D, D]),
    core("ZREMRANGEBYLEX", 0x00D1, KKK),
    core("ZLEXCOUNT", 0x00D2, KKK),
    core("ZPOPMIN", 0x00D3, POP_COUNT),
    core("ZPOPMAX", 0x00D4, POP_COUNT),
    core("BZPOPMIN", 0x00D5, BLOCKING_POP),
    core("BZPOPMAX", 0x00D6, BLOCKING_POP),
    core("ZRANDMEMBER", 0x00D7, &[S, OPT_W, Flags(WITHSCORES)]),
    core("ZDIFF", 0x00D8, &[NumArg(K), Flags(WITHSCORES)]),
    core("ZDIFFSTORE", 0x00D9, &[S, NumArg(K)]),
    core("ZINTER", 0x00DA, &[NumArg(K), Flags(WITHSCORES)]),
    core("ZINTERSTORE", 0x00DB, &[S, NumArg(K), Flags(&[])]),
    core("ZINTERCARD", 0x00DC, &[NumArg(K), LIMIT1]),
    core("ZUNION", 0x00DD, &[NumArg(K), Flags(WITHSCORES)]),
    core("ZUNIONSTORE", 0x00DE, &[S, NumArg(K), Flags(&[])]),
    core(
        "ZSCAN",
        0x00DF,
        &[S, I, MATCH, COUNT_I, Flags(&[("NOSCORES", 0x01)])],
    ),
    core("ZMPOP", 0x00E0, ZMPOP),
    core("BZMPOP", 0x00E1, &[I, NumArg(K), Kw(MINMAX), COUNT_W]),
    core(
        "ZRANGESTORE",
        0x00E2,
        &[
            S,
            S,
            I,
            I,
            Flags(&[("BYSCORE", 0x04), ("BYLEX", 0x08), ("REV", 0x02)]),
        ],
    ),
    // Hashes 0x0100-0x013F.
    core("HSET", 0x0100, K_PAIRS),
    core("HGET", 0x0101, KK),
    core("HMSET", 0x0102, K_PAIRS),
    core("HMGET", 0x0103, K_KEYS),
    core("HGETALL", 0x0104, K),
    core("HDEL", 0x0105, K_KEYS),
    core("HEXISTS", 0x0106, KK),
    core("HINCRBY", 0x0107, &[S, S, I]),
    core("HINCRBYFLOAT", 0x0108, &[S, S, D]),
    core("HKEYS", 0x0109, K),
    core("HVALS", 0x010A, K),
    core("HLEN", 0x010B, K),
    core("HSETNX", 0x010C, &[S, S, V]),
    core("HSTRLEN", 0x010D, KK),
    core(
        "HSCAN",
        0x010E,
        &[S, I, MATCH, COUNT_I, Flags(&[("NOVALUES", 0x01)])],
    ),
    core(
        "HRANDFIELD",
        0x010F,
        &[S, OPT_W, Flags(&[("WITHVALUES", 0x01)])],
    ),
    core("HEXPIRE", 0x0110, HEXPIRE),
    core("HEXPIREAT", 0x0111, HEXPIRE),
    core("HEXPIRETIME", 0x0112, HFIELDS),
    core("HPEXPIRE", 0x0113, HEXPIRE),
    core("HPEXPIREAT", 0x0114, HEXPIRE),
    core("HPEXPIRETIME", 0x0115, HFIELDS),
    core("HPTTL", 0x0116, HFIELDS),
    core("HTTL", 0x0117, HFIELDS),
    core("HPERSIST", 0x0118, HFIELDS),
    core(
        "HGETEX",
        0x0119,
        &[S, FlagsExp(GETEX_FLAGS), Lit("FIELDS"), NumArg(K)],
    ),
    core(
        "HSETEX",
        0x011A,
        &[S, FlagsExp(HSETEX_FLAGS), Lit("FIELDS"), NumArg(KV)],
    ),
    // Bitmaps 0x0140-0x015F.
    core("SETBIT", 0x0140, &[S, I, U8]),
    core("GETBIT", 0x0141, KI),
    core(
        "BITCOUNT",
        0x0142,
        &[S, OPT_I, OPT_I, Flags(&[("BYTE", 0x01), ("BIT", 0x02)])],
    ),
    core(
        "BITPOS",
        0x0143,
        &[S, U8, OPT_I, OPT_I, Flags(&[("BYTE", 0x01), ("BIT", 0x02)])],
    ),
    core(
        "BITOP",
        0x0144,
        &[
            Kw(&["AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE"]),
            S,
            Rest(K),
        ],
    ),
    core("BITFIELD", 0x0145, K_KEYS),
    core("BITFIELD_RO", 0x0146, K_KEYS),
    // HyperLogLog 0x0160-0x017F.
    core("PFADD", 0x0160, K_KEYS),
    core("PFCOUNT", 0x0161, KEYS),
    core("PFMERGE", 0x0162, K_KEYS),
    core("PFDEBUG", 0x0163, KK),
    core("PFSELFTEST", 0x0164, NONE),
    // Geo 0x0180-0x01BF.
    core(
        "GEOADD",
        0x0180,
        &[
            S,
            Flags(&[("NX", 0x01), ("XX", 0x02), ("CH", 0x10)]),
            Rest(&[D, D, S]),
        ],
    ),
    core("GEODIST", 0x0181, &[S, S, S, Opt(&Kw(GEO_UNITS))]),
    core("GEOHASH", 0x0182, K_KEYS),
    core("GEOPOS", 0x0183, K_KEYS),
    core(
        "GEORADIUS",
        0x0184,
        &[S, D, D, D, Kw(GEO_UNITS), Flags(GEORADIUS_FLAGS)],
    ),
    core(
        "GEORADIUSBYMEMBER",
        0x0185,
        &[S, S, D, Kw(GEO_UNITS), Flags(GEORADIUS_FLAGS)],
    ),
    core(
        "GEORADIUS_RO",
        0x0186,
        &[S, D, D, D, Kw(GEO_UNITS), Flags(GEORADIUS_FLAGS)],
    ),
    core(
        "GEORADIUSBYMEMBER_RO",
        0x0187,
        &[S, S, D, Kw(GEO_UNITS), Flags(GEORADIUS_FLAGS)],
    ),
    core("GEOSEARCH", 0x0188, K_KEYS),
    core("GEOSEARCHSTORE", 0x0189, &[S, S, Rest(K)]),
    // Streams 0x01C0-0x01FF.
    core("XADD", 0x01C0, &[S, S, Rest(KV)]),
    core("XLEN", 0x01C1, K),
    core("XRANGE", 0x01C2, &[S, S, S, COUNT_I]),
    core("XREVRANGE", 0x01C3, &[S, S, S, COUNT_I]),
    core(
        "XREAD",
        0x01C4,
        &[COUNT_I, OptKw("BLOCK", &[I]), Lit("STREAMS"), Rest(K)],
    ),
    core(
        "XREADGROUP",
        0x01C5,
        &[
            Lit("GROUP"),
            S,
            S,
            COUNT_I,
            OptKw("BLOCK", &[I]),
            Flags(&[("NOACK", 0x01)]),
            Lit("STREAMS"),
            Rest(K),
        ],
    ),
    core("XDEL", 0x01C6, K_KEYS),
    core(
        "XTRIM",
        0x01C7,
        &[
            S,
            Kw(&["MAXLEN", "MINID"]),
            Flags(&[("=", 0x01), ("~", 0x02)]),
            I,
            LIMIT1,
        ],
    ),
    core("XACK", 0x01C8, &[S, S, Rest(K)]),
    core(
        "XPENDING",
        0x01C9,
        &[S, S, OptKw("IDLE", &[I]), OPT_S, OPT_S, OPT_I, OPT_S],
    ),
    core("XCLAIM", 0x01CA, &[S, S, S, I, Rest(K), Flags(&[])]),
    core(
        "XAUTOCLAIM",
        0x01CB,
        &[S, S, S, I, S, COUNT_I, Flags(&[("JUSTID", 0x01)])],
    ),
    core("XINFO", 0x01CC, ARGS),
    core("XGROUP", 0x01CD, ARGS),
    core(
        "XSETID",
        0x01CE,
        &[
            S,
            S,
            OptKw("ENTRIESADDED", &[I]),
            OptKw("MAXDELETEDID", &[S]),
        ],
    ),
    // Pub/sub 0x0200-0x023F.
    core("PUBLISH", 0x0200, KV),
    core("SUBSCRIBE", 0x0201, KEYS),
    core("UNSUBSCRIBE", 0x0202, KEYS),
    core("PSUBSCRIBE", 0x0203, KEYS),
    core("PUNSUBSCRIBE", 0x0204, KEYS),
    core("PUBSUB", 0x0205, ARGS),
    core("SPUBLISH", 0x0206, KV),
    core("SSUBSCRIBE", 0x0207, KEYS),
    core("SUNSUBSCRIBE", 0x0208, KEYS),
    // Transactions 0x0240-0x025F.
    core("MULTI", 0x0240, NONE),
    core("EXEC", 0x0241, NONE),
    core("DISCARD", 0x0242, NONE),
    core("WATCH", 0x0243, KEYS),
    core("UNWATCH", 0x0244, NONE),
    // Scripting 0x0260-0x02BF.
    core("EVAL", 0x0260, &[V, NumArg(K), Rest(K)]),
    core("EVALSHA", 0x0261, &[S, NumArg(K), Rest(K)]),
    core("EVAL_RO", 0x0262, &[V, NumArg(K), Rest(K)]),
    core("EVALSHA_RO", 0x0263, &[S, NumArg(K), Rest(K)]),
    core("SCRIPT", 0x0264, ARGS),
    core("FCALL", 0x0265, &[S, NumArg(K), Rest(K)]),
    core("FCALL_RO", 0x0266, &[S, NumArg(K), Rest(K)]),
    core("FUNCTION", 0x0267, ARGS),
    // Generic keys 0x02C0-0x02FF.
    core("DEL", 0x02C0, KEYS),
    core("UNLINK", 0x02C1, KEYS),
    core("EXISTS", 0x02C2, KEYS),
    core("EXPIRE", 0x02C3, EXPIRE),
    core("EXPIREAT", 0x02C4, EXPIRE),
    core("EXPIRETIME", 0x02C5, K),
    core("PEXPIRE", 0x02C6, EXPIRE),
    core("PEXPIREAT", 0x02C7, EXPIRE),
    core("PEXPIRETIME", 0x02C8, K),
    core("TTL", 0x02C9, K),
    core("PTTL", 0x02CA, K),
    core("PERSIST", 0x02CB, K),
    core("KEYS", 0x02CC, K),
    core("SCAN", 0x02CD, &[I, MATCH, COUNT_I, OptKw("TYPE", &[S])]),
    core("RANDOMKEY", 0x02CE, NONE),
    core("RENAME", 0x02CF, KK),
    core("RENAMENX", 0x02D0, KK),
    core("TYPE", 0x02D1, K),
    core("DUMP", 0x02D2, K),
    core("RESTORE", 0x02D3, RESTORE),
    core(
        "MIGRATE",
        0x02D4,
        &[S, W, S, W, I, Flags(&[("COPY", 0x01), ("REPLACE", 0x02)])],
    ),
    core("MOVE", 0x02D5, &[S, W]),
    core(
        "COPY",
        0x02D6,
        &[S, S, OptKw("DB", &[W]), Flags(&[("REPLACE", 0x01)])],
    ),
    core("SORT", 0x02D7, K_KEYS),
    core("SORT_RO", 0x02D8, K_KEYS),
    core("TOUCH", 0x02D9, KEYS),
    core("OBJECT", 0x02DA, ARGS),
    core("WAIT", 0x02DB, &[I, I]),
    core("WAITAOF", 0x02DC, &[I, I, I]),
    // Connection 0x0300-0x033F.
    core("PING", 0x0300, &[OPT_S]),
    core("ECHO", 0x0301, K),
    core("AUTH", 0x0302, &[OPT_S, S]),
    core("SELECT", 0x0303, &[W]),
    core("QUIT", 0x0304, NONE),
    core(
        "HELLO",
        0x0305,
        &[Opt(&U8), OptKw("AUTH", &[S, S]), OptKw("SETNAME", &[S])],
    ),
    core("RESET", 0x0306, NONE),
    core("CLIENT", 0x0307, ARGS),
    // Cluster 0x0340-0x03BF.
    core("CLUSTER", 0x0340, ARGS),
    core("READONLY", 0x0341, NONE),
    core("READWRITE", 0x0342, NONE),
    core("ASKING", 0x0343, NONE),
    // Server 0x03C0-0x04FF.
    core("DBSIZE", 0x03C0, NONE),
    core(
        "FLUSHDB",
        0x03C1,
        &[Flags(&[("ASYNC", 0x01), ("SYNC", 0x02)])],
    ),
    core(
        "FLUSHALL",
        0x03C2,
        &[Flags(&[("ASYNC", 0x01), ("SYNC", 0x02)])],
    ),
    core("SAVE", 0x03C3, NONE),
    core("BGSAVE", 0x03C4, &[Flags(&[("SCHEDULE", 0x01)])]),
    core("BGREWRITEAOF", 0x03C5, NONE),
    core("LASTSAVE", 0x03C6, NONE),
    core(
        "SHUTDOWN",
        0x03C7,
        &[Flags(&[
            ("NOSAVE", 0x01),
            ("SAVE", 0x02),
            ("NOW", 0x04),
            ("FORCE", 0x08),
            ("ABORT", 0x10),
        ])],
    ),
    core("INFO", 0x03C8, ARGS),
    core("CONFIG", 0x03C9, ARGS),
    core("COMMAND", 0x03CA, ARGS),
    core("TIME", 0x03CB, NONE),
    core("ROLE", 0x03CC, NONE),
    core("REPLICAOF", 0x03CD, &[S, W]),
    core("SLAVEOF", 0x03CE, &[S, W]),
    core("MONITOR", 0x03CF, NONE),
    core("DEBUG", 0x03D0, ARGS),
    core("SYNC", 0x03D1, NONE),
    core("PSYNC", 0x03D2, KI),
    core("REPLCONF", 0x03D3, ARGS),
    core("SLOWLOG", 0x03D4, ARGS),
    core("LATENCY", 0x03D5, ARGS),
    core("MEMORY", 0x03D6, ARGS),
    core("MODULE", 0x03D7, ARGS),
    core("ACL", 0x03D8, ARGS),
    core("FAILOVER", 0x03D9, ARGS),
    core("SWAPDB", 0x03DA, &[W, W]),
    core("LOLWUT", 0x03DB, ARGS),
    core("RESTORE-ASKING", 0x03DC, RESTORE),
    core("COMMANDLOG", 0x03DD, ARGS),
];

/// Every module command, sorted by subcommand.
pub static MODULES: &[Command] = &[
    module(
        "JSON.SET",
        0x0000_0000,
        &[S, S, V, Flags(&[("NX", 0x01), ("XX", 0x02)])],
    ),
    module("JSON.GET", 0x0000_0001, K_KEYS),
    module("JSON.MGET", 0x0000_0002, &[Rest(K), S]),
    module("JSON.MSET", 0x0000_0003, &[Rest(&[S, S, V])]),
    module("JSON.DEL", 0x0000_0004, JSON_KEY_PATH),
    module("JSON.FORGET", 0x0000_0005, JSON_KEY_PATH),
    module("JSON.TYPE", 0x0000_0006, JSON_KEY_PATH),
    module("JSON.CLEAR", 0x0000_0007, JSON_KEY_PATH),
    module("JSON.ARRAPPEND", 0x0000_0008, &[S, S, Rest(&[V])]),
    module("JSON.ARRINDEX", 0x0000_0009, &[S, S, V, OPT_I, OPT_I]),
    module("JSON.ARRINSERT", 0x0000_000A, &[S, S, I, Rest(&[V])]),
    module("JSON.ARRLEN", 0x0000_000B, JSON_KEY_PATH),
    module("JSON.ARRPOP", 0x0000_000C, &[S, OPT_S, OPT_I]),
    module("JSON.ARRTRIM", 0x0000_000D, &[S, S, I, I]),
    module("JSON.OBJKEYS", 0x0000_000E, JSON_KEY_PATH),
    module("JSON.OBJLEN", 0x0000_000F, JSON_KEY_PATH),
    module("JSON.STRLEN", 0x0000_0010, JSON_KEY_PATH),
    module("JSON.STRAPPEND", 0x0000_0011, &[S, S, V]),
    module("JSON.NUMINCRBY", 0x0000_0012, &[S, S, D]),
    module("JSON.NUMMULTBY", 0x0000_0013, &[S, S, D]),
    module("JSON.TOGGLE", 0x0000_0014, KK),
    module("JSON.DEBUG", 0x0000_0015, ARGS),
    module("JSON.RESP", 0x0000_0016, JSON_KEY_PATH),
    module("BF.ADD", 0x0001_0000, KK),
    module("BF.MADD", 0x0001_0001, K_KEYS),
    module("BF.EXISTS", 0x0001_0002, KK),
    module("BF.MEXISTS", 0x0001_0003, K_KEYS),
    module(
        "BF.RESERVE",
        0x0001_0004,
        &[S, D, I, Flags(&[("NONSCALING", 0x01)])],
    ),
    module(
        "BF.INSERT",
        0x0001_0005,
        &[
            S,
            Flags(&[("NOCREATE", 0x01), ("NONSCALING", 0x02)]),
            Lit("ITEMS"),
            Rest(K),
        ],
    ),
    module("BF.CARD", 0x0001_0006, K),
    module("BF.INFO", 0x0001_0007, K),
    module("BF.LOAD", 0x0001_0008, KV),
    module("FT.CREATE", 0x0002_0000, K_KEYS),
    module("FT.SEARCH", 0x0002_0001, KK),
    module("FT.DROPINDEX", 0x0002_0002, &[S, Flags(&[("DD", 0x01)])]),
    module("FT.INFO", 0x0002_0003, K),
    module("FT._LIST", 0x0002_0004, NONE),
];

/// Looks up a core command by opcode.
pub fn core_by_op(op: u16) -> Option<&'static Command> {
    CORE.binary_search_by_key(&op, |c| match c.op {
        Op::Core(o) => o,
        Op::Module(_) => u16::MAX,
    })
    .ok()
    .and_then(|i| CORE.get(i))
}

/// Looks up a module command by its 32-bit subcommand.
pub fn module_by_sub(sub: u32) -> Option<&'static Command> {
    MODULES
        .binary_search_by_key(&sub, |c| match c.op {
            Op::Module(s) => s,
            Op::Core(_) => u32::MAX,
        })
        .ok()
        .and_then(|i| MODULES.get(i))
}

/// Looks up a command by name, ignoring ASCII case.
pub fn by_name(name: &[u8]) -> Option<&'static Command> {
    CORE.iter()
        .chain(MODULES.iter())
        .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}
