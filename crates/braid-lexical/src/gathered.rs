//! Counts gathered across indexes: what lets a search split over several indexes (a fan-out,
//! one index per machine or partition) decide and score exactly as one index holding all
//! their records would.
//!
//! Every decision the lexical and fuzzy legs take — which word is unknown, which expansions,
//! completions and corrections are kept, each term's BM25 weight, what feedback adds — is a
//! function of a few counts over the caller's allowed records ([`crate::visible_counts`],
//! [`crate::scorer::Statistics`]) and of the candidate words the vocabulary proposes. Each
//! such count is a sum over disjoint sets of records, and each candidate list a union, so the
//! one-index answer to every [`Question`] is the sum (or union) of the indexes' answers
//! ([`Answer::merge`]).
//!
//! A request's view made with [`Gathered`] answers from it, records what it was asked and
//! could not answer ([`crate::View::asked`]), and meanwhile answers from its own records so it
//! can go on and find what else it will ask. A coordinator asks every index for those counts
//! ([`crate::View::answer`]), adds them to the table and runs the view again, until a run asks
//! nothing: that run's every decision came from the table, the same on every index, and its
//! scores are the one-index scores.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::Mutex;

use braid_core::{Error, Result};
use serde::{Deserialize, Serialize};

/// One count or word list a request's legs ask of the records its caller may see.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "q", rename_all = "snake_case")]
pub enum Question {
    /// Allowed records holding an indexed text term of field number `field`.
    TermDf {
        /// The schema's field number.
        field: u32,
        /// The term's text.
        term: String,
    },
    /// Allowed records.
    NumDocs,
    /// Tokens in field number `field` over the allowed records.
    TotalLength {
        /// The schema's field number.
        field: u32,
    },
    /// Words the vocabulary holds within `edits` edits of `word` (itself excluded), with their
    /// distances.
    Neighbours {
        /// The word.
        word: String,
        /// At most this many edits.
        edits: usize,
    },
    /// Words the vocabulary holds that start with `prefix` (itself excluded).
    Completions {
        /// The prefix.
        prefix: String,
    },
    /// For each of the `tied` words, the allowed records that hold it and one of the `context`
    /// words (see [`crate::context`]).
    Joint {
        /// The candidate corrections.
        tied: Vec<String>,
        /// The query's other known words.
        context: Vec<String>,
    },
    /// The Chinese words whose full pinyin (`initials`: whose initials) is `key`.
    Phonetic {
        /// The key.
        key: String,
        /// Whether `key` is initials rather than full pinyin.
        initials: bool,
    },
    /// The longest full pinyin key of any Chinese word, in bytes.
    PhoneticLongest,
}

/// One index's answer to a [`Question`]; answers to the same question merge into the
/// one-index answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// A count (summed across indexes).
    Count(u64),
    /// A count per tied word (summed, word by word).
    Counts(Vec<u64>),
    /// Words allowed records hold, with their edit distances and visible document frequencies
    /// (united, frequencies summed).
    Neighbours(Vec<(String, usize, u64)>),
    /// Words allowed records hold, with their visible document frequencies (united,
    /// frequencies summed).
    Words(Vec<(String, u64)>),
    /// A length in bytes (the largest across indexes).
    Longest(u64),
}

impl Answer {
    /// The answer of one index holding the records of both.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when the two answer different kinds of question.
    pub fn merge(self, other: Answer) -> Result<Answer> {
        Ok(match (self, other) {
            (Answer::Count(a), Answer::Count(b)) => Answer::Count(a + b),
            (Answer::Counts(a), Answer::Counts(b)) if a.len() == b.len() => {
                Answer::Counts(a.into_iter().zip(b).map(|(a, b)| a + b).collect())
            }
            (Answer::Neighbours(a), Answer::Neighbours(b)) => {
                let mut united: BTreeMap<String, (usize, u64)> = BTreeMap::new();
                for (word, distance, df) in a.into_iter().chain(b) {
                    united.entry(word).or_insert((distance, 0)).1 += df;
                }
                Answer::Neighbours(united.into_iter().map(|(w, (d, df))| (w, d, df)).collect())
            }
            (Answer::Words(a), Answer::Words(b)) => {
                let mut united: BTreeMap<String, u64> = BTreeMap::new();
                for (word, df) in a.into_iter().chain(b) {
                    *united.entry(word).or_insert(0) += df;
                }
                Answer::Words(united.into_iter().collect())
            }
            (Answer::Longest(a), Answer::Longest(b)) => Answer::Longest(a.max(b)),
            (a, b) => {
                return Err(Error::InvalidRequest {
                    reason: format!("answers of different kinds cannot merge: {a:?} and {b:?}"),
                })
            }
        })
    }
}

/// One record among the first lexical search's best, as pseudo-relevance feedback reads it:
/// what one index sends for its part of the feedback ([`crate::View::feedback_reads`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackCandidate {
    /// The record's id.
    pub id: String,
    /// Its first search's score.
    pub score: f32,
    /// The document it belongs to: its parent, else its own id.
    pub document: String,
    /// The analysed terms of its first words, in order.
    pub terms: Vec<String>,
}

/// The answers gathered so far for one request, merged over every index: what a view made
/// with it answers from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Gathered {
    /// Each question with its merged answer.
    #[serde(with = "pairs")]
    answers: BTreeMap<Question, Answer>,
    /// The relevance model pseudo-relevance feedback expands the lexical query with, once the
    /// first search's best records are known across every index (`None`: not yet).
    pub feedback: Option<Vec<(String, f32)>>,
}

impl Gathered {
    /// The merged answer to `question`, if gathered.
    pub fn get(&self, question: &Question) -> Option<&Answer> {
        self.answers.get(question)
    }

    /// Merges one index's `answers` to `questions` into the table (each index's answers
    /// are added once per question: call it once per index, with that index's answers).
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when the counts differ in number from the questions, or an
    /// answer does not fit its question's kind.
    pub fn add(&mut self, questions: &[Question], answers: Vec<Answer>) -> Result<()> {
        if questions.len() != answers.len() {
            return Err(Error::InvalidRequest {
                reason: format!("{} answers to {} questions", answers.len(), questions.len()),
            });
        }
        for (question, answer) in questions.iter().zip(answers) {
            let merged = match self.answers.remove(question) {
                Some(before) => before.merge(answer)?,
                None => answer,
            };
            self.answers.insert(question.clone(), merged);
        }
        Ok(())
    }

    /// Adds the answers and the feedback model of `added`, a table of questions this one does
    /// not hold yet (what a fan-out sends an index that holds this table: what is new since).
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when `added` answers a question this table already holds
    /// (its answer would count twice); the table is then unchanged.
    pub fn extend(&mut self, added: Gathered) -> Result<()> {
        if let Some(question) = added.answers.keys().find(|q| self.answers.contains_key(*q)) {
            return Err(Error::InvalidRequest { reason: format!("counts sent twice for one question ({question:?})") });
        }
        self.answers.extend(added.answers);
        if added.feedback.is_some() {
            self.feedback = added.feedback;
        }
        Ok(())
    }

    /// The answers to `questions` this table holds, as a table of their own (no feedback
    /// model).
    pub fn only(&self, questions: &[Question]) -> Gathered {
        let answers = questions.iter().filter_map(|q| Some((q.clone(), self.answers.get(q)?.clone()))).collect();
        Gathered { answers, feedback: None }
    }

    /// Questions gathered.
    pub fn len(&self) -> usize {
        self.answers.len()
    }

    /// Whether nothing was gathered yet.
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    pub(crate) fn count(&self, question: &Question) -> Option<u64> {
        match self.answers.get(question)? {
            Answer::Count(n) | Answer::Longest(n) => Some(*n),
            _ => None,
        }
    }
}

/// What the views of one request on one snapshot and allowed set remember from round to
/// round of a fan-out ([`crate::Snapshot::view_remembering`]): what new counts do not
/// change. A gathered answer never changes once gathered, nor does a walk of this snapshot's
/// vocabulary, so a later round reads them here instead of doing the work again. Its size
/// grows with the request's gathered word lists and it lives as long as the request.
#[derive(Debug, Default)]
pub struct Memo {
    /// This snapshot's vocabulary walks: its words near a word, by word and edits.
    pub(crate) walks: Mutex<HashMap<(String, usize), NearWords>>,
    /// Gathered word lists ordered as the legs read them, by question.
    pub(crate) lists: Mutex<HashMap<Question, NearWords>>,
    /// This snapshot's completions and pinyin words (index-wide counts), by question.
    pub(crate) words: Mutex<HashMap<Question, CountedWords>>,
}

/// Words with their counts, as [`Answer::Words`] holds them.
pub(crate) type CountedWords = Arc<[(String, u64)]>;

/// Words with their edit distances and counts, as [`Answer::Neighbours`] holds them.
pub(crate) type NearWords = Arc<[(String, usize, u64)]>;

impl Memo {
    /// `key`'s value in `map`, else `make()`'s, kept.
    pub(crate) fn get_or<K: Eq + std::hash::Hash, V: Clone>(
        map: &Mutex<HashMap<K, V>>,
        key: K,
        make: impl FnOnce() -> V,
    ) -> V {
        if let Some(found) = map.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return found.clone();
        }
        let made = make();
        map.lock().unwrap_or_else(|p| p.into_inner()).insert(key, made.clone());
        made
    }
}

/// A view's use of a [`Gathered`] table: the table, and what it was asked and could not answer.
pub(crate) struct Gathering {
    pub given: Arc<Gathered>,
    asked: Mutex<BTreeSet<Question>>,
    /// The first lexical search's best records, when feedback ran without a given model.
    pub feedback: Mutex<Option<Vec<FeedbackCandidate>>>,
    /// What the request's views remember between rounds.
    pub memo: Arc<Memo>,
}

impl Gathering {
    pub fn new(given: Arc<Gathered>, memo: Arc<Memo>) -> Self {
        Gathering { given, asked: Mutex::new(BTreeSet::new()), feedback: Mutex::new(None), memo }
    }

    /// Notes a question the table could not answer.
    pub fn ask(&self, question: Question) {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).insert(question);
    }

    /// The count the table holds for `question`, else `local()` with the question noted.
    pub fn count(&self, question: Question, local: impl FnOnce() -> u64) -> u64 {
        match self.given.count(&question) {
            Some(n) => n,
            None => {
                self.ask(question);
                local()
            }
        }
    }

    /// The table's answer to `question`, else `local()` with the question noted.
    pub fn answer<T>(
        &self,
        question: Question,
        given: impl FnOnce(&Answer) -> Option<T>,
        local: impl FnOnce() -> T,
    ) -> T {
        match self.given.get(&question).and_then(given) {
            Some(found) => found,
            None => {
                self.ask(question);
                local()
            }
        }
    }

    /// Whether the table could not answer something asked.
    pub fn lacks(&self) -> bool {
        !self.asked.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
    }

    /// What the table could not answer, each once.
    pub fn asked(&self) -> Vec<Question> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect()
    }
}

/// A map with structured keys, written as a list of pairs (JSON keys are strings).
mod pairs {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Answer, Question};

    pub fn serialize<S: Serializer>(map: &BTreeMap<Question, Answer>, s: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(&Question, &Answer)> = map.iter().collect();
        pairs.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<Question, Answer>, D::Error> {
        let pairs: Vec<(Question, Answer)> = Vec::deserialize(d)?;
        Ok(pairs.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_merge_as_one_index_would_answer() {
        let count = Answer::Count(2).merge(Answer::Count(3)).unwrap();
        assert_eq!(count, Answer::Count(5));
        let near = Answer::Neighbours(vec![("viral".into(), 1, 3)])
            .merge(Answer::Neighbours(vec![("visual".into(), 1, 2), ("viral".into(), 1, 4)]))
            .unwrap();
        assert_eq!(near, Answer::Neighbours(vec![("viral".into(), 1, 7), ("visual".into(), 1, 2)]));
        let words = Answer::Words(vec![("kubectl".into(), 1)]).merge(Answer::Words(vec![("kubectl".into(), 2)]));
        assert_eq!(words.unwrap(), Answer::Words(vec![("kubectl".into(), 3)]));
        assert_eq!(Answer::Counts(vec![1, 2]).merge(Answer::Counts(vec![3, 4])).unwrap(), Answer::Counts(vec![4, 6]));
        assert_eq!(Answer::Longest(6).merge(Answer::Longest(9)).unwrap(), Answer::Longest(9));
        assert!(Answer::Count(1).merge(Answer::Words(vec![])).is_err());
        assert!(Answer::Counts(vec![1]).merge(Answer::Counts(vec![1, 2])).is_err());
    }

    #[test]
    fn a_table_survives_json() {
        let mut table = Gathered::default();
        let questions = [Question::NumDocs, Question::TermDf { field: 1, term: "vitamin".into() }];
        table.add(&questions, vec![Answer::Count(10), Answer::Count(4)]).unwrap();
        table.add(&questions, vec![Answer::Count(5), Answer::Count(1)]).unwrap();
        table.feedback = Some(vec![("vitamin".into(), 0.5)]);
        let back: Gathered = serde_json::from_str(&serde_json::to_string(&table).unwrap()).unwrap();
        assert_eq!(back, table);
        assert_eq!(back.count(&Question::NumDocs), Some(15));
        assert!(table.add(&questions, vec![Answer::Count(1)]).is_err());
    }

    #[test]
    fn a_table_grows_by_what_is_new_only() {
        let mut table = Gathered::default();
        let (a, b) = (Question::NumDocs, Question::TermDf { field: 1, term: "vitamin".into() });
        table.add(&[a.clone(), b.clone()], vec![Answer::Count(10), Answer::Count(4)]).unwrap();
        let mut held = table.only(std::slice::from_ref(&a));
        assert_eq!((held.len(), held.get(&a)), (1, Some(&Answer::Count(10))));
        let mut added = table.only(std::slice::from_ref(&b));
        added.feedback = Some(vec![("vitamin".into(), 0.5)]);
        held.extend(added.clone()).unwrap();
        table.feedback = added.feedback.clone();
        assert_eq!(held, table);
        // A question sent twice would count twice: refused, the table unchanged.
        assert!(held.extend(added).is_err());
        assert_eq!(held, table);
    }
}
