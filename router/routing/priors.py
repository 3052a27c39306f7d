"""Optional English word-frequency priors for the weighted provider (``word_priors = true``).

``word_frequency()`` returns a function word -> Zipf frequency (log10 of occurrences per
billion words: "the" ~7.7, "windows" ~4.7, "setx" ~1.2, an unknown word 0) from the ``wordfreq``
package, or ``None`` when it is not installed. It is called only when a routing table is built
(importing wordfreq and loading its English list costs ~0.5 s), never per prompt: the table
stores one number per memory stem. wordfreq's code is Apache-2.0 and its data CC BY-SA 4.0;
memory-router ships neither, it only reads an installed copy.
"""


def word_frequency():
    try:
        from wordfreq import zipf_frequency
    except ImportError:
        return None

    def frequency(word):
        return zipf_frequency(word, "en")

    return frequency
