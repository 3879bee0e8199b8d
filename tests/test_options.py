"""The command-line options a project declares anywhere, with their literal defaults."""

from __future__ import annotations

import textwrap

from snlint.link.options import option_defaults
from snlint.source import extract


def defaults(**files: str) -> dict:
    facts = [extract(textwrap.dedent(text), f"{name}.py", f"{name}.py") for name, text in files.items()]
    return option_defaults(facts)


def test_options_declared_in_an_options_class_and_a_static_method():
    assert defaults(base_options='''
        class BaseOptions:
            def initialize(self, parser):
                parser.add_argument("--norm_D", type=str, default="spectralinstance")
                parser.add_argument("--ndf", type=int, default=64, help="filters")
                parser.add_argument("--no_instance", action="store_true")
                parser.add_argument("--gpu-ids", default="0")
                parser.add_argument("--dataroot", required=True)
                return parser
    ''', discriminator='''
        class MultiscaleDiscriminator:
            @staticmethod
            def modify_commandline_options(parser, is_train):
                parser.add_argument("--num_D", type=int, default=2)
                parser.add_argument("--ndf", type=int, default=32)
                return parser
    ''') == {
        "norm_D": {"value": "spectralinstance", "where": "base_options.py:4"},
        "ndf": {"value": 64, "where": "base_options.py:5"},
        "no_instance": {"value": False, "where": "base_options.py:6"},
        "gpu_ids": {"value": "0", "where": "base_options.py:7"},
        "num_D": {"value": 2, "where": "discriminator.py:5"},
    }


def test_an_explicit_dest_names_the_option():
    assert defaults(train='''
        parser.add_argument("-b", "--batch", dest="batch_size", default=16)
    ''') == {"batch_size": {"value": 16, "where": "train.py:2"}}


def test_a_files_option_calls_are_read_with_its_facts():
    # The source pass keeps each statement's `add_argument` call (snlint.source.configured):
    # the link step gathers them from every file without walking the files again.
    file = extract(textwrap.dedent('''
        def more(parser):
            parser.add_argument("--e", default=5)

        class Options:
            def initialize(self, parser):
                parser.add_argument("--a", default=1)
                action = parser.add_argument("--b", default=2)
                if parser:
                    parser.add_argument("--c", default=3)
                print(parser.add_argument("--d", default=4))
    '''), "opts.py", "opts.py")
    assert [call.span.line for call in file.option_calls] == [3, 7, 8, 10]


def test_a_module_level_parser_is_read():
    # A `config.py` that parses at import: its calls lower to `config.parser.add_argument`.
    assert defaults(config='''
        import argparse
        parser = argparse.ArgumentParser("PGGAN")
        parser.add_argument("--ndf", type=int, default=512)
        parser.add_argument("--flag_bn", type=bool, default=False)
        config, _ = parser.parse_known_args()
    ''') == {"ndf": {"value": 512, "where": "config.py:4"},
              "flag_bn": {"value": False, "where": "config.py:5"}}
