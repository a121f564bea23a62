//! Calendar dates of the Unix times that records and certificates carry, for people to
//! read: one conversion, used by the report's history tables and the TLS checks.
//!
//! The day count is turned into a proleptic Gregorian date (UTC) by counting whole eras
//! of 400 years (146,097 days), as in Howard Hinnant's `civil_from_days` algorithm
//! ("chrono-Compatible Low-Level Date Algorithms").

/// The `(year, month, day)` of the day `days` days after 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `2020-02-01`: the UTC date of `unix_secs` seconds since 1970.
pub fn date_of_unix_secs(unix_secs: i64) -> String {
    let (y, m, d) = civil_from_days(unix_secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_across_leap_days_centuries_and_before_1970() {
        let cases = [
            (0, "1970-01-01"),
            (1_580_515_200, "2020-02-01"),
            (951_782_400, "2000-02-29"),
            (4_102_444_800, "2100-01-01"),
            (-1, "1969-12-31"),
        ];
        for (secs, date) in cases {
            assert_eq!(date_of_unix_secs(secs), date, "{secs}");
        }
        assert_eq!(civil_from_days(-719_468), (0, 3, 1));
    }
}
