//! Warnings of a comparison as lines: one per kind (more exactly, per kind and shared
//! text, [`Warning::split`]), naming every place it applies to with that place's own
//! figure, so nine `high_variance` warnings are one line with nine metrics rather than
//! nine lines saying the same thing. The terminal table, Markdown and HTML all use it.

use resplab_stats::warning::Warning;

/// One warning where it applies: the place (`set ops_per_sec`, or a metric inside a
/// workload's section) and the variant.
#[derive(Debug)]
pub struct Placed<'a> {
    pub warning: &'a Warning,
    pub place: String,
    pub variant: &'a str,
}

/// One place of a group: where, which variant, the figure there.
type Entry<'a> = (String, &'a str, Option<String>);

/// The grouped lines, in the order kinds first appear: `[kind] place (figure), …,
/// variant: shared text` when one variant has them all, else `[kind] place, variant
/// (figure); …: shared text`. With `max_places`, further places are counted
/// (`and 4 more`) rather than named.
pub fn grouped(items: &[Placed<'_>], max_places: Option<usize>) -> Vec<String> {
    // (kind, shared text) → (place, variant, figure), in first-seen order.
    let mut groups: Vec<(&str, String, Vec<Entry<'_>>)> = Vec::new();
    for it in items {
        let (figure, shared) = it.warning.split();
        let entry = (it.place.clone(), it.variant, figure);
        let kind = it.warning.kind();
        match groups.iter_mut().find(|g| g.0 == kind && g.1 == shared) {
            Some(g) if !g.2.contains(&entry) => g.2.push(entry),
            Some(_) => {}
            None => groups.push((kind, shared, vec![entry])),
        }
    }
    groups
        .into_iter()
        .map(|(kind, shared, entries)| {
            format!("[{kind}] {}: {shared}", places(&entries, max_places))
        })
        .collect()
}

/// The places of one line, each with its figure, the variant said once when it is the
/// same for all.
fn places(entries: &[Entry<'_>], max_places: Option<usize>) -> String {
    let one_variant = entries.iter().all(|e| e.1 == entries[0].1);
    // One figure for every place (six pairs each): said once, after the places.
    let common = (entries.len() > 1 && entries.iter().all(|e| e.2 == entries[0].2))
        .then(|| entries[0].2.clone())
        .flatten();
    let entries_shown: Vec<Entry<'_>> = entries
        .iter()
        .map(|(p, v, f)| {
            (
                p.clone(),
                *v,
                if common.is_some() { None } else { f.clone() },
            )
        })
        .collect();
    let entries = &entries_shown[..];
    let with_figure = |text: String, figure: &Option<String>| match figure {
        Some(f) => format!("{text} ({f})"),
        None => text,
    };
    let shown: Vec<String> = entries
        .iter()
        .take(max_places.unwrap_or(usize::MAX))
        .map(|(place, variant, figure)| {
            if one_variant {
                with_figure(place.clone(), figure)
            } else {
                with_figure(format!("{place}, {variant}"), figure)
            }
        })
        .collect();
    let sep = if one_variant { ", " } else { "; " };
    let mut text = shown.join(sep);
    if entries.len() > shown.len() {
        text.push_str(&format!(" and {} more", entries.len() - shown.len()));
    }
    if one_variant {
        text.push_str(&format!(", {}", entries[0].1));
    }
    if let Some(f) = common {
        text.push_str(&format!(" ({f})"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hv(cv: f64) -> Warning {
        Warning::HighVariance {
            cv_pct: cv,
            threshold_pct: 5.0,
        }
    }

    #[test]
    fn one_line_per_kind_names_every_metric_with_its_figure() {
        let (a, b, c) = (hv(17.4), hv(8.5), Warning::NotInterleaved);
        let items = [
            Placed {
                warning: &a,
                place: "set ops_per_sec".into(),
                variant: "v1",
            },
            Placed {
                warning: &c,
                place: "set ops_per_sec".into(),
                variant: "v1",
            },
            Placed {
                warning: &b,
                place: "set p99_us".into(),
                variant: "v1",
            },
            Placed {
                warning: &c,
                place: "set p99_us".into(),
                variant: "v1",
            },
        ];
        let lines = grouped(&items, None);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[0],
            "[high_variance] set ops_per_sec (17.4%), set p99_us (8.5%), v1: per-trial variation \
             above 5.0%: pin CPUs, set the governor to performance, lengthen windows, or add rounds"
        );
        assert!(lines[1].starts_with("[not_interleaved] set ops_per_sec, set p99_us, v1: "));
    }

    #[test]
    fn several_variants_are_named_per_place_and_long_lists_are_counted() {
        let (w, other) = (hv(9.0), hv(12.0));
        let items: Vec<Placed<'_>> = (0..5)
            .map(|i| Placed {
                warning: if i == 4 { &other } else { &w },
                place: format!("m{i}"),
                variant: if i % 2 == 0 { "a" } else { "b" },
            })
            .collect();
        let lines = grouped(&items, Some(3));
        assert_eq!(lines.len(), 1);
        // The same figure everywhere is said once, after the places.
        assert!(
            grouped(&items[..4], None)[0]
                .starts_with("[high_variance] m0, a; m1, b; m2, a; m3, b (9.0%): "),
            "{:?}",
            grouped(&items[..4], None)
        );
        assert!(
            lines[0].starts_with(
                "[high_variance] m0, a (9.0%); m1, b (9.0%); m2, a (9.0%) and 2 more: "
            ),
            "{}",
            lines[0]
        );
    }
}
