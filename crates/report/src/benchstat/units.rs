//! Units and numbers as benchstat prints them: unit tidying, SI and IEC prefixes, Go's `%v`.

/// Converts a unit to benchstat's base unit: `ns` → `sec` (×1e-9) and `MB` → `B`
/// (×1e6) in the numerator. Returns the tidied unit and the factor.
pub fn tidy_unit(unit: &str) -> (String, f64) {
    match unit {
        "ns/op" => return ("sec/op".into(), 1e-9),
        "MB/s" => return ("B/s".into(), 1e6),
        "B/op" | "allocs/op" => return (unit.into(), 1.0),
        _ => {}
    }
    if !(unit.contains("ns") || unit.contains("MB")) {
        return (unit.into(), 1.0);
    }
    let mut out = String::new();
    let mut factor = 1.0;
    for (tok, denom, sep) in unit_tokens(unit) {
        out.push_str(sep);
        if !denom && tok == "ns" {
            out.push_str("sec");
            factor /= 1e9;
        } else if !denom && tok == "MB" {
            out.push('B');
            factor *= 1e6;
        } else {
            out.push_str(tok);
        }
    }
    (out, factor)
}

/// Splits a unit into (token, in denominator, separators before it) triples; the
/// separators are `*`, `/`, `-` and white space, as in benchunit's parser.
fn unit_tokens(unit: &str) -> Vec<(&str, bool, &str)> {
    let mut out = Vec::new();
    let mut denom = false;
    let mut i = 0;
    let is_sep = |c: char| c == '*' || c == '/' || c == '-' || c.is_whitespace();
    while i < unit.len() {
        let sep_start = i;
        for c in unit[i..].chars() {
            if !is_sep(c) {
                break;
            }
            if c == '*' {
                denom = false;
            } else if c == '/' {
                denom = true;
            }
            i += c.len_utf8();
        }
        let tok_start = i;
        for c in unit[i..].chars() {
            if is_sep(c) {
                break;
            }
            i += c.len_utf8();
        }
        out.push((&unit[tok_start..i], denom, &unit[sep_start..tok_start]));
    }
    out
}

/// True when the unit counts bytes in its numerator (IEC prefixes then apply).
pub fn is_binary_unit(unit: &str) -> bool {
    unit_tokens(unit)
        .iter()
        .any(|(t, denom, _)| !denom && (*t == "B" || *t == "MB" || *t == "bytes"))
}

/// A number format: digits after the point, the prefix's value and its symbol.
#[derive(Clone, Debug, PartialEq)]
pub struct Scaler {
    pub prec: usize,
    pub factor: f64,
    pub prefix: &'static str,
}

impl Scaler {
    /// Formats `v` with this scale.
    pub fn format(&self, v: f64) -> String {
        format!("{:.*}{}", self.prec, v / self.factor, self.prefix)
    }
}

struct Factor {
    factor: f64,
    prefix: &'static str,
    t100: f64,
    t10: f64,
    t1: f64,
}

fn si_factors() -> Vec<Factor> {
    let table: [(i32, &str, f64); 8] = [
        (12, "T", 1e12),
        (9, "G", 1e9),
        (6, "M", 1e6),
        (3, "k", 1e3),
        (0, "", 1.0),
        (-3, "m", 1e-3),
        (-6, "µ", 1e-6),
        (-9, "n", 1e-9),
    ];
    table
        .iter()
        .map(|&(exp, prefix, factor)| {
            let parse = |m: &str| format!("{m}e{exp}").parse::<f64>().unwrap_or(f64::INFINITY);
            Factor {
                factor,
                prefix,
                t100: parse("99.995"),
                t10: parse("9.9995"),
                t1: parse(".99995"),
            }
        })
        .collect()
}

fn iec_factors() -> Vec<Factor> {
    // Thresholds 99.995, 9.9995 and .99995 as the binary fractions benchunit uses,
    // scaled by the power of two of each prefix.
    let m100 = 0x18ffae147ae148u64 as f64 / (1u64 << 52) as f64;
    let m10 = 0x13ffbe76c8b439u64 as f64 / (1u64 << 52) as f64;
    let m1 = 0x1fff972474538fu64 as f64 / (1u64 << 52) as f64;
    [(40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"), (0, "")]
        .iter()
        .map(|&(exp, prefix)| Factor {
            factor: 2f64.powi(exp),
            prefix,
            t100: m100 * 2f64.powi(6 + exp),
            t10: m10 * 2f64.powi(3 + exp),
            t1: m1 * 2f64.powi(exp - 1),
        })
        .collect()
}

/// The common scale for `vals`: the non-zero value closest to zero gets at least three
/// significant digits.
pub fn common_scale(vals: &[f64], binary: bool) -> Scaler {
    let mut min = 0.0f64;
    for v in vals {
        let v = v.abs();
        if v != 0.0 && (min == 0.0 || v < min) {
            min = v;
        }
    }
    if min == 0.0 {
        return Scaler {
            prec: 3,
            factor: 1.0,
            prefix: "",
        };
    }
    let factors = if binary { iec_factors() } else { si_factors() };
    for f in &factors {
        let prec = if min >= f.t100 {
            1
        } else if min >= f.t10 {
            2
        } else if min >= f.t1 {
            3
        } else {
            continue;
        };
        return Scaler {
            prec,
            factor: f.factor,
            prefix: f.prefix,
        };
    }
    let last = &factors[factors.len() - 1];
    let val = min / last.factor;
    let mut prec = 3;
    for (i, exp) in (-8..=-1).rev().enumerate() {
        let thresh: f64 = format!("9.9995e{exp}").parse().unwrap_or(0.0);
        prec = i + 3;
        if val >= thresh {
            break;
        }
    }
    Scaler {
        prec,
        factor: last.factor,
        prefix: last.prefix,
    }
}

/// Formats one value with its own scale (the geomean row).
pub fn scale(v: f64, binary: bool) -> String {
    common_scale(&[v], binary).format(v)
}

/// `%v` of a Go float64: the shortest representation that reads back exactly, in
/// exponent form when the decimal exponent is below −4 or at least 6 (Go's `%v` is `%g`
/// with the shortest precision, which decides the form as if the precision were 6).
pub fn go_float(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{v:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        format!("{v}")
    }
}

/// Go's `%v` of a float64 confidence or alpha level in messages (`0.95`, `0.05`).
pub(super) fn go_level(v: f64) -> String {
    go_float(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidies_units() {
        assert_eq!(tidy_unit("ns/op"), ("sec/op".into(), 1e-9));
        assert_eq!(tidy_unit("MB/s"), ("B/s".into(), 1e6));
        assert_eq!(tidy_unit("ns/GC"), ("sec/GC".into(), 1e-9));
        assert_eq!(tidy_unit("B/ns").0, "B/ns");
        assert!(is_binary_unit("B/op"));
        assert!(!is_binary_unit("sec/op"));
        assert!(!is_binary_unit("ops/B"));
    }

    #[test]
    fn scales_like_benchunit() {
        assert_eq!(
            common_scale(&[129.794e-6, 93.79e-6], false).format(129.794e-6),
            "129.79µ"
        );
        assert_eq!(scale(111.0e-6, false), "111.0µ");
        assert_eq!(scale(3236.0, true), "3.160Ki");
        assert_eq!(scale(188.0, true), "188.0");
        assert_eq!(scale(6.0, false), "6.000");
        assert_eq!(scale(0.0, false), "0.000");
    }

    #[test]
    fn go_floats() {
        assert_eq!(go_float(0.000129794), "0.000129794");
        assert_eq!(go_float(9.976900000000001e-05), "9.976900000000001e-05");
        assert_eq!(go_float(188.0), "188");
        assert_eq!(go_float(0.95), "0.95");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(123456.0), "123456");
    }
}
