//! Built-in function names and "did you mean" suggestions.

use kdsl_ir::{AtomicOp, MathFunction, SubGroupOp, WorkItemQuery};

/// A function the language provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    WorkItem(WorkItemQuery),
    Barrier,
    Math(MathFunction),
    Select,
    Atomic(AtomicOp),
    SubGroup(SubGroupOp),
}

impl Builtin {
    pub fn from_name(name: &str) -> Option<Builtin> {
        if name == "barrier" {
            return Some(Builtin::Barrier);
        }
        if name == "select" {
            return Some(Builtin::Select);
        }
        if let Some(q) = WorkItemQuery::ALL.into_iter().find(|q| q.name() == name) {
            return Some(Builtin::WorkItem(q));
        }
        if let Some(m) = MathFunction::ALL.into_iter().find(|m| m.name() == name) {
            return Some(Builtin::Math(m));
        }
        if let Some(a) = AtomicOp::ALL.into_iter().find(|a| a.name() == name) {
            return Some(Builtin::Atomic(a));
        }
        SubGroupOp::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .map(Builtin::SubGroup)
    }

    /// Every built-in name, for suggestions.
    pub fn all_names() -> Vec<&'static str> {
        let mut names = vec!["barrier", "select"];
        names.extend(WorkItemQuery::ALL.iter().map(|q| q.name()));
        names.extend(MathFunction::ALL.iter().map(|m| m.name()));
        names.extend(AtomicOp::ALL.iter().map(|a| a.name()));
        names.extend(SubGroupOp::ALL.iter().map(|s| s.name()));
        names
    }
}

/// The Levenshtein distance between two names.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            suggest("get_global_idx", Builtin::all_names()),
            Some("get_global_id")
        );
        assert_eq!(suggest("zzz", ["alpha", "beta"]), None);
    }
}
