//! Every opcode of the RESPB table, encoded from a RESP command and compared with bytes
//! written out by hand from the layout tables. The expected bytes use a tiny assembler:
//! `op:XXXX` (header with mux 0), `mod:XXXXXXXX` (module header), `s:text` (u16 length +
//! text), `v:text` (u32 length + text), `i:N` (int64), `d:X` (float64), `w:N` (u16),
//! `b:HH` (one byte), `none-s`, `none-i`, `none-w` (absent sentinels).

use resplab_proto::resp::Limits;
use resplab_proto::respb::codec::{decode_frame, encode_command, frame_to_args, Encoding, Frame};

fn asm(spec: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for tok in spec.split_whitespace() {
        let (kind, val) = tok.split_once(':').unwrap_or((tok, ""));
        let val = val.replace('^', " ");
        match kind {
            "op" => {
                out.extend_from_slice(&u16::from_str_radix(&val, 16).unwrap().to_be_bytes());
                out.extend_from_slice(&[0, 0]);
            }
            "mod" => {
                out.extend_from_slice(&[0xF0, 0x00, 0, 0]);
                out.extend_from_slice(&u32::from_str_radix(&val, 16).unwrap().to_be_bytes());
            }
            "s" => {
                out.extend_from_slice(&(val.len() as u16).to_be_bytes());
                out.extend_from_slice(val.as_bytes());
            }
            "v" => {
                out.extend_from_slice(&(val.len() as u32).to_be_bytes());
                out.extend_from_slice(val.as_bytes());
            }
            "i" => out.extend_from_slice(&val.parse::<i64>().unwrap().to_be_bytes()),
            "d" => out.extend_from_slice(&val.parse::<f64>().unwrap().to_be_bytes()),
            "w" => out.extend_from_slice(&val.parse::<u16>().unwrap().to_be_bytes()),
            "b" => out.push(u8::from_str_radix(&val, 16).unwrap()),
            "none-s" | "none-w" => out.extend_from_slice(&[0xFF, 0xFF]),
            "none-i" => out.extend_from_slice(&i64::MIN.to_be_bytes()),
            other => panic!("bad token {other}"),
        }
    }
    out
}

/// (RESP command, words separated by spaces, `^` for a space inside a word; expected bytes)
const CASES: &[(&str, &str)] = &[
    ("GET mykey", "op:0000 s:mykey"),
    ("SET foo hello", "op:0001 s:foo v:hello b:00 i:0"),
    ("SET k v NX EX 60", "op:0001 s:k v:v b:05 i:60"),
    ("SET k v XX PX 1500", "op:0001 s:k v:v b:0a i:1500"),
    ("SET k v GET KEEPTTL", "op:0001 s:k v:v b:30 i:0"),
    ("SET k v EXAT 17", "op:0001 s:k v:v b:40 i:17"),
    ("APPEND k data", "op:0002 s:k v:data"),
    ("DECR k", "op:0003 s:k"),
    ("DECRBY k 5", "op:0004 s:k i:5"),
    ("GETDEL k", "op:0005 s:k"),
    ("GETEX k PX 100", "op:0006 s:k b:08 i:100"),
    ("GETEX k PERSIST", "op:0006 s:k b:10 i:0"),
    ("GETRANGE k 0 -1", "op:0007 s:k i:0 i:-1"),
    ("GETSET k v", "op:0008 s:k v:v"),
    ("INCR k", "op:0009 s:k"),
    ("INCRBY k -3", "op:000A s:k i:-3"),
    ("INCRBYFLOAT k 0.5", "op:000B s:k d:0.5"),
    ("MGET a b c", "op:000C w:3 s:a s:b s:c"),
    ("MSET a 1 b 2", "op:000D w:2 s:a v:1 s:b v:2"),
    ("MSETNX a 1", "op:000E w:1 s:a v:1"),
    ("PSETEX k 100 v", "op:000F s:k i:100 v:v"),
    ("SETEX k 10 v", "op:0010 s:k i:10 v:v"),
    ("SETNX k v", "op:0011 s:k v:v"),
    ("SETRANGE k 3 v", "op:0012 s:k i:3 v:v"),
    ("STRLEN k", "op:0013 s:k"),
    ("SUBSTR k 1 2", "op:0014 s:k i:1 i:2"),
    ("LCS a b LEN", "op:0015 s:a s:b b:01"),
    ("DELIFEQ k v", "op:0016 s:k v:v"),
    ("LPUSH l x y", "op:0040 s:l w:2 s:x s:y"),
    ("RPUSH l x", "op:0041 s:l w:1 s:x"),
    ("LPOP l", "op:0042 s:l none-w"),
    ("LPOP l 3", "op:0042 s:l w:3"),
    ("RPOP l 2", "op:0043 s:l w:2"),
    ("LLEN l", "op:0044 s:l"),
    ("LRANGE mylist 0 -1", "op:0045 s:mylist i:0 i:-1"),
    ("LINDEX l 4", "op:0046 s:l i:4"),
    ("LSET l 1 e", "op:0047 s:l i:1 s:e"),
    ("LREM l -2 e", "op:0048 s:l i:-2 s:e"),
    ("LTRIM l 0 9", "op:0049 s:l i:0 i:9"),
    ("LINSERT l AFTER p e", "op:004A s:l b:01 s:p s:e"),
    ("LPUSHX l a", "op:004B s:l w:1 s:a"),
    ("RPUSHX l a b", "op:004C s:l w:2 s:a s:b"),
    ("RPOPLPUSH a b", "op:004D s:a s:b"),
    ("LMOVE a b LEFT RIGHT", "op:004E s:a s:b b:00 b:01"),
    ("LMPOP 2 a b RIGHT COUNT 3", "op:004F w:2 s:a s:b b:01 w:3"),
    ("LMPOP 1 a LEFT", "op:004F w:1 s:a b:00 none-w"),
    (
        "LPOS l e RANK 2 MAXLEN 10",
        "op:0050 s:l s:e i:2 none-w i:10",
    ),
    ("BLPOP a b 0", "op:0051 w:2 s:a s:b i:0"),
    ("BRPOP a 5", "op:0052 w:1 s:a i:5"),
    ("BRPOPLPUSH a b 1", "op:0053 s:a s:b i:1"),
    ("BLMOVE a b RIGHT LEFT 2", "op:0054 s:a s:b b:01 b:00 i:2"),
    ("BLMPOP 1 2 a b LEFT", "op:0055 i:1 w:2 s:a s:b b:00 none-w"),
    ("SADD myset x y z", "op:0080 s:myset w:3 s:x s:y s:z"),
    ("SREM s x", "op:0081 s:s w:1 s:x"),
    ("SMEMBERS s", "op:0082 s:s"),
    ("SISMEMBER s m", "op:0083 s:s s:m"),
    ("SCARD s", "op:0084 s:s"),
    ("SPOP s", "op:0085 s:s none-w"),
    ("SRANDMEMBER s -5", "op:0086 s:s i:-5"),
    ("SINTER a b", "op:0087 w:2 s:a s:b"),
    ("SINTERSTORE d a", "op:0088 s:d w:1 s:a"),
    ("SUNION a", "op:0089 w:1 s:a"),
    ("SUNIONSTORE d a b", "op:008A s:d w:2 s:a s:b"),
    ("SDIFF a b", "op:008B w:2 s:a s:b"),
    ("SDIFFSTORE d a", "op:008C s:d w:1 s:a"),
    ("SMOVE a b m", "op:008D s:a s:b s:m"),
    ("SSCAN s 0 MATCH a* COUNT 10", "op:008E s:s i:0 s:a* i:10"),
    ("SSCAN s 7", "op:008E s:s i:7 none-s none-i"),
    ("SINTERCARD 2 a b LIMIT 5", "op:008F w:2 s:a s:b i:5"),
    ("SMISMEMBER s a b", "op:0090 s:s w:2 s:a s:b"),
    ("ZADD myset 1.5 foo", "op:00C0 s:myset b:00 w:1 d:1.5 s:foo"),
    (
        "ZADD z NX CH 1 a 2 b",
        "op:00C0 s:z b:11 w:2 d:1 s:a d:2 s:b",
    ),
    ("ZREM z a", "op:00C1 s:z w:1 s:a"),
    ("ZCARD z", "op:00C2 s:z"),
    ("ZCOUNT z 1 2.5", "op:00C3 s:z d:1 d:2.5"),
    ("ZINCRBY z 2 m", "op:00C4 s:z d:2 s:m"),
    ("ZRANGE z 0 -1 WITHSCORES", "op:00C5 s:z i:0 i:-1 b:01"),
    ("ZRANGE z 0 5 REV", "op:00C5 s:z i:0 i:5 b:02"),
    ("ZRANGEBYSCORE z 1 2 WITHSCORES", "op:00C6 s:z d:1 d:2 b:01"),
    (
        "ZRANGEBYLEX z [a [b LIMIT 0 10",
        "op:00C7 s:z s:[a s:[b i:0 i:10",
    ),
    ("ZREVRANGE z 0 1", "op:00C8 s:z i:0 i:1 b:00"),
    (
        "ZREVRANGEBYSCORE z 5 1",
        "op:00C9 s:z d:5 d:1 b:00 none-i none-i",
    ),
    (
        "ZREVRANGEBYLEX z [b [a",
        "op:00CA s:z s:[b s:[a none-i none-i",
    ),
    ("ZRANK z m", "op:00CB s:z s:m b:00"),
    ("ZREVRANK z m WITHSCORE", "op:00CC s:z s:m b:01"),
    ("ZSCORE z m", "op:00CD s:z s:m"),
    ("ZMSCORE z a b", "op:00CE s:z w:2 s:a s:b"),
    ("ZREMRANGEBYRANK z 0 1", "op:00CF s:z i:0 i:1"),
    ("ZREMRANGEBYSCORE z 1 2", "op:00D0 s:z d:1 d:2"),
    ("ZREMRANGEBYLEX z [a [b", "op:00D1 s:z s:[a s:[b"),
    ("ZLEXCOUNT z - +", "op:00D2 s:z s:- s:+"),
    ("ZPOPMIN z", "op:00D3 s:z none-w"),
    ("ZPOPMAX z 2", "op:00D4 s:z w:2"),
    ("BZPOPMIN a b 0", "op:00D5 w:2 s:a s:b i:0"),
    ("BZPOPMAX a 1", "op:00D6 w:1 s:a i:1"),
    ("ZRANDMEMBER z 3 WITHSCORES", "op:00D7 s:z w:3 b:01"),
    ("ZDIFF 2 a b WITHSCORES", "op:00D8 w:2 s:a s:b b:01"),
    ("ZDIFFSTORE d 1 a", "op:00D9 s:d w:1 s:a"),
    ("ZINTER 1 a", "op:00DA w:1 s:a b:00"),
    ("ZINTERSTORE d 2 a b", "op:00DB s:d w:2 s:a s:b b:00"),
    ("ZINTERCARD 1 a", "op:00DC w:1 s:a none-i"),
    ("ZUNION 2 a b", "op:00DD w:2 s:a s:b b:00"),
    ("ZUNIONSTORE d 1 a", "op:00DE s:d w:1 s:a b:00"),
    ("ZSCAN z 0 NOSCORES", "op:00DF s:z i:0 none-s none-i b:01"),
    ("ZMPOP 1 z MIN", "op:00E0 w:1 s:z b:00 none-w"),
    ("BZMPOP 0 1 z MAX COUNT 2", "op:00E1 i:0 w:1 s:z b:01 w:2"),
    ("ZRANGESTORE d s 0 -1", "op:00E2 s:d s:s i:0 i:-1 b:00"),
    (
        "HSET myhash field value",
        "op:0100 s:myhash w:1 s:field v:value",
    ),
    ("HGET h f", "op:0101 s:h s:f"),
    ("HMSET h a 1 b 2", "op:0102 s:h w:2 s:a v:1 s:b v:2"),
    ("HMGET h a b", "op:0103 s:h w:2 s:a s:b"),
    ("HGETALL h", "op:0104 s:h"),
    ("HDEL h a", "op:0105 s:h w:1 s:a"),
    ("HEXISTS h a", "op:0106 s:h s:a"),
    ("HINCRBY h a 2", "op:0107 s:h s:a i:2"),
    ("HINCRBYFLOAT h a 0.25", "op:0108 s:h s:a d:0.25"),
    ("HKEYS h", "op:0109 s:h"),
    ("HVALS h", "op:010A s:h"),
    ("HLEN h", "op:010B s:h"),
    ("HSETNX h f v", "op:010C s:h s:f v:v"),
    ("HSTRLEN h f", "op:010D s:h s:f"),
    (
        "HSCAN h 0 MATCH f* NOVALUES",
        "op:010E s:h i:0 s:f* none-i b:01",
    ),
    ("HRANDFIELD h", "op:010F s:h none-w b:00"),
    (
        "HEXPIRE h 10 NX FIELDS 1 f",
        "op:0110 s:h i:10 b:01 w:1 s:f",
    ),
    (
        "HEXPIREAT h 100 FIELDS 2 a b",
        "op:0111 s:h i:100 b:00 w:2 s:a s:b",
    ),
    ("HEXPIRETIME h FIELDS 1 f", "op:0112 s:h w:1 s:f"),
    ("HPEXPIRE h 10 FIELDS 1 f", "op:0113 s:h i:10 b:00 w:1 s:f"),
    (
        "HPEXPIREAT h 10 GT FIELDS 1 f",
        "op:0114 s:h i:10 b:04 w:1 s:f",
    ),
    ("HPEXPIRETIME h FIELDS 1 f", "op:0115 s:h w:1 s:f"),
    ("HPTTL h FIELDS 1 f", "op:0116 s:h w:1 s:f"),
    ("HTTL h FIELDS 1 f", "op:0117 s:h w:1 s:f"),
    ("HPERSIST h FIELDS 1 f", "op:0118 s:h w:1 s:f"),
    ("HGETEX h EX 5 FIELDS 1 f", "op:0119 s:h b:04 i:5 w:1 s:f"),
    (
        "HSETEX h FNX KEEPTTL FIELDS 1 f v",
        "op:011A s:h b:11 i:0 w:1 s:f v:v",
    ),
    ("SETBIT k 7 1", "op:0140 s:k i:7 b:01"),
    ("GETBIT k 7", "op:0141 s:k i:7"),
    ("BITCOUNT k 0 -1 BIT", "op:0142 s:k i:0 i:-1 b:02"),
    ("BITPOS k 1", "op:0143 s:k b:01 none-i none-i b:00"),
    ("BITOP XOR d a b", "op:0144 b:02 s:d w:2 s:a s:b"),
    ("BITFIELD k GET u8 0", "op:0145 s:k w:3 s:GET s:u8 s:0"),
    ("BITFIELD_RO k GET u8 0", "op:0146 s:k w:3 s:GET s:u8 s:0"),
    ("PFADD h a b", "op:0160 s:h w:2 s:a s:b"),
    ("PFCOUNT a b", "op:0161 w:2 s:a s:b"),
    ("PFMERGE d a", "op:0162 s:d w:1 s:a"),
    ("PFDEBUG GETREG h", "op:0163 s:GETREG s:h"),
    ("PFSELFTEST", "op:0164"),
    (
        "GEOADD g 13.5 38.25 p",
        "op:0180 s:g b:00 w:1 d:13.5 d:38.25 s:p",
    ),
    ("GEODIST g a b KM", "op:0181 s:g s:a s:b b:01"),
    ("GEODIST g a b", "op:0181 s:g s:a s:b b:ff"),
    ("GEOHASH g a", "op:0182 s:g w:1 s:a"),
    ("GEOPOS g a b", "op:0183 s:g w:2 s:a s:b"),
    (
        "GEORADIUS g 15 37 200 KM WITHDIST ASC",
        "op:0184 s:g d:15 d:37 d:200 b:01 b:0a",
    ),
    (
        "GEORADIUSBYMEMBER g p 10 M",
        "op:0185 s:g s:p d:10 b:00 b:00",
    ),
    (
        "GEORADIUS_RO g 1 2 3 MI",
        "op:0186 s:g d:1 d:2 d:3 b:03 b:00",
    ),
    (
        "GEORADIUSBYMEMBER_RO g p 1 FT WITHCOORD",
        "op:0187 s:g s:p d:1 b:02 b:01",
    ),
    (
        "GEOSEARCH g FROMMEMBER p BYRADIUS 1 km",
        "op:0188 s:g w:5 s:FROMMEMBER s:p s:BYRADIUS s:1 s:km",
    ),
    (
        "GEOSEARCHSTORE d g FROMMEMBER p",
        "op:0189 s:d s:g w:2 s:FROMMEMBER s:p",
    ),
    ("XADD st * f v", "op:01C0 s:st s:* w:1 s:f v:v"),
    ("XLEN st", "op:01C1 s:st"),
    ("XRANGE st - + COUNT 2", "op:01C2 s:st s:- s:+ i:2"),
    ("XREVRANGE st + -", "op:01C3 s:st s:+ s:- none-i"),
    (
        "XREAD COUNT 2 STREAMS st 0",
        "op:01C4 i:2 none-i w:2 s:st s:0",
    ),
    (
        "XREADGROUP GROUP g c NOACK STREAMS st >",
        "op:01C5 s:g s:c none-i none-i b:01 w:2 s:st s:>",
    ),
    ("XDEL st 1-0 2-0", "op:01C6 s:st w:2 s:1-0 s:2-0"),
    (
        "XTRIM st MAXLEN ~ 1000",
        "op:01C7 s:st b:00 b:02 i:1000 none-i",
    ),
    ("XACK st g 1-0", "op:01C8 s:st s:g w:1 s:1-0"),
    (
        "XPENDING st g - + 10",
        "op:01C9 s:st s:g none-i s:- s:+ i:10 none-s",
    ),
    (
        "XCLAIM st g c 100 1-0",
        "op:01CA s:st s:g s:c i:100 w:1 s:1-0 b:00",
    ),
    (
        "XAUTOCLAIM st g c 100 0 JUSTID",
        "op:01CB s:st s:g s:c i:100 s:0 none-i b:01",
    ),
    ("XINFO STREAM st", "op:01CC w:2 s:STREAM s:st"),
    ("XGROUP CREATE st g $", "op:01CD w:4 s:CREATE s:st s:g s:$"),
    ("XSETID st 5-0", "op:01CE s:st s:5-0 none-i none-s"),
    ("PUBLISH news hello", "op:0200 s:news v:hello"),
    ("SUBSCRIBE a b", "op:0201 w:2 s:a s:b"),
    ("UNSUBSCRIBE a", "op:0202 w:1 s:a"),
    ("PSUBSCRIBE n*", "op:0203 w:1 s:n*"),
    ("PUNSUBSCRIBE", "op:0204 w:0"),
    ("PUBSUB CHANNELS", "op:0205 w:1 s:CHANNELS"),
    ("SPUBLISH c m", "op:0206 s:c v:m"),
    ("SSUBSCRIBE c", "op:0207 w:1 s:c"),
    ("SUNSUBSCRIBE c", "op:0208 w:1 s:c"),
    ("MULTI", "op:0240"),
    ("EXEC", "op:0241"),
    ("DISCARD", "op:0242"),
    ("WATCH a b", "op:0243 w:2 s:a s:b"),
    ("UNWATCH", "op:0244"),
    ("EVAL return^1 1 k a", "op:0260 v:return^1 w:1 s:k w:1 s:a"),
    ("EVALSHA abc 0", "op:0261 s:abc w:0 w:0"),
    ("EVAL_RO s 0 x", "op:0262 v:s w:0 w:1 s:x"),
    ("EVALSHA_RO abc 1 k", "op:0263 s:abc w:1 s:k w:0"),
    ("SCRIPT FLUSH", "op:0264 w:1 s:FLUSH"),
    ("FCALL f 1 k a b", "op:0265 s:f w:1 s:k w:2 s:a s:b"),
    ("FCALL_RO f 0", "op:0266 s:f w:0 w:0"),
    ("FUNCTION LIST", "op:0267 w:1 s:LIST"),
    ("DEL key1 key2", "op:02C0 w:2 s:key1 s:key2"),
    ("UNLINK a", "op:02C1 w:1 s:a"),
    ("EXISTS a b", "op:02C2 w:2 s:a s:b"),
    ("EXPIRE k 60", "op:02C3 s:k i:60 b:00"),
    ("EXPIREAT k 100 XX", "op:02C4 s:k i:100 b:02"),
    ("EXPIRETIME k", "op:02C5 s:k"),
    ("PEXPIRE k 5 LT", "op:02C6 s:k i:5 b:08"),
    ("PEXPIREAT k 5", "op:02C7 s:k i:5 b:00"),
    ("PEXPIRETIME k", "op:02C8 s:k"),
    ("TTL k", "op:02C9 s:k"),
    ("PTTL k", "op:02CA s:k"),
    ("PERSIST k", "op:02CB s:k"),
    ("KEYS user:*", "op:02CC s:user:*"),
    (
        "SCAN 0 MATCH k* COUNT 100 TYPE string",
        "op:02CD i:0 s:k* i:100 s:string",
    ),
    ("SCAN 0", "op:02CD i:0 none-s none-i none-s"),
    ("RANDOMKEY", "op:02CE"),
    ("RENAME a b", "op:02CF s:a s:b"),
    ("RENAMENX a b", "op:02D0 s:a s:b"),
    ("TYPE k", "op:02D1 s:k"),
    ("DUMP k", "op:02D2 s:k"),
    ("RESTORE k 0 data REPLACE", "op:02D3 s:k i:0 v:data b:01"),
    (
        "MIGRATE h 6379 k 0 1000 COPY",
        "op:02D4 s:h w:6379 s:k w:0 i:1000 b:01",
    ),
    ("MOVE k 2", "op:02D5 s:k w:2"),
    ("COPY a b DB 3 REPLACE", "op:02D6 s:a s:b w:3 b:01"),
    ("SORT k ALPHA", "op:02D7 s:k w:1 s:ALPHA"),
    ("SORT_RO k", "op:02D8 s:k w:0"),
    ("TOUCH a", "op:02D9 w:1 s:a"),
    ("OBJECT ENCODING k", "op:02DA w:2 s:ENCODING s:k"),
    ("WAIT 1 100", "op:02DB i:1 i:100"),
    ("WAITAOF 1 0 100", "op:02DC i:1 i:0 i:100"),
    ("PING", "op:0300 none-s"),
    ("PING hi", "op:0300 s:hi"),
    ("ECHO hello", "op:0301 s:hello"),
    ("AUTH pw", "op:0302 none-s s:pw"),
    ("AUTH user pw", "op:0302 s:user s:pw"),
    ("SELECT 3", "op:0303 w:3"),
    ("QUIT", "op:0304"),
    ("HELLO 3 AUTH u p SETNAME n", "op:0305 b:03 s:u s:p s:n"),
    ("HELLO", "op:0305 b:00 none-s none-s none-s"),
    ("RESET", "op:0306"),
    ("CLIENT SETNAME x", "op:0307 w:2 s:SETNAME s:x"),
    ("CLUSTER INFO", "op:0340 w:1 s:INFO"),
    ("READONLY", "op:0341"),
    ("READWRITE", "op:0342"),
    ("ASKING", "op:0343"),
    ("DBSIZE", "op:03C0"),
    ("FLUSHDB ASYNC", "op:03C1 b:01"),
    ("FLUSHALL", "op:03C2 b:00"),
    ("SAVE", "op:03C3"),
    ("BGSAVE SCHEDULE", "op:03C4 b:01"),
    ("BGREWRITEAOF", "op:03C5"),
    ("LASTSAVE", "op:03C6"),
    ("SHUTDOWN NOSAVE NOW", "op:03C7 b:05"),
    ("INFO server", "op:03C8 w:1 s:server"),
    ("CONFIG GET maxmemory", "op:03C9 w:2 s:GET s:maxmemory"),
    ("COMMAND COUNT", "op:03CA w:1 s:COUNT"),
    ("TIME", "op:03CB"),
    ("ROLE", "op:03CC"),
    ("REPLICAOF h 6379", "op:03CD s:h w:6379"),
    ("SLAVEOF h 1", "op:03CE s:h w:1"),
    ("MONITOR", "op:03CF"),
    ("DEBUG SLEEP 0", "op:03D0 w:2 s:SLEEP s:0"),
    ("SYNC", "op:03D1"),
    ("PSYNC ? -1", "op:03D2 s:? i:-1"),
    ("REPLCONF ACK 5", "op:03D3 w:2 s:ACK s:5"),
    ("SLOWLOG GET 5", "op:03D4 w:2 s:GET s:5"),
    ("LATENCY LATEST", "op:03D5 w:1 s:LATEST"),
    ("MEMORY USAGE k", "op:03D6 w:2 s:USAGE s:k"),
    ("MODULE LIST", "op:03D7 w:1 s:LIST"),
    ("ACL WHOAMI", "op:03D8 w:1 s:WHOAMI"),
    ("FAILOVER ABORT", "op:03D9 w:1 s:ABORT"),
    ("SWAPDB 0 1", "op:03DA w:0 w:1"),
    ("LOLWUT", "op:03DB w:0"),
    ("RESTORE-ASKING k 0 d", "op:03DC s:k i:0 v:d b:00"),
    ("COMMANDLOG GET 1 slow", "op:03DD w:3 s:GET s:1 s:slow"),
    (
        "JSON.SET profile .name \"John^Doe\"",
        "mod:00000000 s:profile s:.name v:\"John^Doe\" b:00",
    ),
    ("JSON.SET k $ {} NX", "mod:00000000 s:k s:$ v:{} b:01"),
    ("JSON.GET k $.a $.b", "mod:00000001 s:k w:2 s:$.a s:$.b"),
    ("JSON.MGET a b $", "mod:00000002 w:2 s:a s:b s:$"),
    (
        "JSON.MSET a $ 1 b $ 2",
        "mod:00000003 w:2 s:a s:$ v:1 s:b s:$ v:2",
    ),
    ("JSON.DEL k", "mod:00000004 s:k none-s"),
    ("JSON.DEL k $.a", "mod:00000004 s:k s:$.a"),
    ("JSON.FORGET k $", "mod:00000005 s:k s:$"),
    ("JSON.TYPE k", "mod:00000006 s:k none-s"),
    ("JSON.CLEAR k $", "mod:00000007 s:k s:$"),
    ("JSON.ARRAPPEND k $ 1 2", "mod:00000008 s:k s:$ w:2 v:1 v:2"),
    (
        "JSON.ARRINDEX k $ 3 0 -1",
        "mod:00000009 s:k s:$ v:3 i:0 i:-1",
    ),
    ("JSON.ARRINSERT k $ 0 1", "mod:0000000A s:k s:$ i:0 w:1 v:1"),
    ("JSON.ARRLEN k $", "mod:0000000B s:k s:$"),
    ("JSON.ARRPOP k $ -1", "mod:0000000C s:k s:$ i:-1"),
    ("JSON.ARRTRIM k $ 0 1", "mod:0000000D s:k s:$ i:0 i:1"),
    ("JSON.OBJKEYS k", "mod:0000000E s:k none-s"),
    ("JSON.OBJLEN k $", "mod:0000000F s:k s:$"),
    ("JSON.STRLEN k $", "mod:00000010 s:k s:$"),
    ("JSON.STRAPPEND k $ \"x\"", "mod:00000011 s:k s:$ v:\"x\""),
    ("JSON.NUMINCRBY k $.n 2", "mod:00000012 s:k s:$.n d:2"),
    ("JSON.NUMMULTBY k $.n 1.5", "mod:00000013 s:k s:$.n d:1.5"),
    ("JSON.TOGGLE k $.b", "mod:00000014 s:k s:$.b"),
    ("JSON.DEBUG MEMORY k", "mod:00000015 w:2 s:MEMORY s:k"),
    ("JSON.RESP k", "mod:00000016 s:k none-s"),
    ("BF.ADD bf item", "mod:00010000 s:bf s:item"),
    ("BF.MADD bf a b", "mod:00010001 s:bf w:2 s:a s:b"),
    ("BF.EXISTS bf a", "mod:00010002 s:bf s:a"),
    ("BF.MEXISTS bf a", "mod:00010003 s:bf w:1 s:a"),
    (
        "BF.RESERVE bf 0.01 1000 NONSCALING",
        "mod:00010004 s:bf d:0.01 i:1000 b:01",
    ),
    (
        "BF.INSERT bf NOCREATE ITEMS a b",
        "mod:00010005 s:bf b:01 w:2 s:a s:b",
    ),
    ("BF.CARD bf", "mod:00010006 s:bf"),
    ("BF.INFO bf", "mod:00010007 s:bf"),
    ("BF.LOAD bf data", "mod:00010008 s:bf v:data"),
    (
        "FT.CREATE idx ON HASH SCHEMA t TEXT",
        "mod:00020000 s:idx w:5 s:ON s:HASH s:SCHEMA s:t s:TEXT",
    ),
    ("FT.SEARCH idx hello", "mod:00020001 s:idx s:hello"),
    ("FT.DROPINDEX idx DD", "mod:00020002 s:idx b:01"),
    ("FT.INFO idx", "mod:00020003 s:idx"),
    ("FT._LIST", "mod:00020004"),
];

fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ')
        .map(|w| w.replace('^', " ").into_bytes())
        .collect()
}

#[test]
fn every_opcode_matches_hand_derived_bytes() {
    let limits = Limits::default();
    for (line, spec) in CASES {
        let args = words(line);
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let mut out = Vec::new();
        let enc = encode_command(&mut out, 0, &refs);
        assert!(
            matches!(enc, Encoding::Native(_)),
            "{line}: went to passthrough"
        );
        assert_eq!(out, asm(spec), "{line}");
        let mut frame = Frame::default();
        assert_eq!(
            decode_frame(&out, &limits, &mut frame),
            Ok(Some(out.len())),
            "{line}"
        );
        let mut back = Vec::new();
        frame_to_args(&frame, &limits, &mut back).unwrap();
        assert_eq!(back, args, "{line}");
        for cut in 0..out.len() {
            assert_eq!(
                decode_frame(&out[..cut], &limits, &mut frame),
                Ok(None),
                "{line} cut {cut}"
            );
        }
    }
}

#[test]
fn every_table_entry_has_a_case() {
    use resplab_proto::respb::table::{CORE, MODULES};
    for c in CORE.iter().chain(MODULES.iter()) {
        assert!(
            CASES
                .iter()
                .any(|(line, _)| line.split(' ').next() == Some(c.name)),
            "no hand-derived case for {}",
            c.name
        );
    }
}
