"""The definitions-only copy of a training script (libcst; no torch needed)."""

from __future__ import annotations

import textwrap

from snlint.graph.definitions import definitions_only


def copy(source: str) -> str:
    return definitions_only(textwrap.dedent(source))[0]


def test_training_code_is_left_out_and_every_kept_line_stays_where_it_was():
    source = textwrap.dedent('''\
        import argparse
        import torch
        os.makedirs("images", exist_ok=True)
        parser = argparse.ArgumentParser()
        parser.add_argument("--img_size", type=int, default=32)
        opt = parser.parse_args()
        img_shape = (1, opt.img_size, opt.img_size)
        cuda = True if torch.cuda.is_available() else False
        generator = Generator()
        dataloader = DataLoader(
            data,
            batch_size=opt.batch_size,
        )
        class D(nn.Module):
            pass
        for epoch in range(opt.n_epochs):
            train(epoch)
        print("done")
    ''')
    out, dropped = definitions_only(source)
    assert out == textwrap.dedent('''\
        import argparse
        import torch
        pass
        parser = argparse.ArgumentParser()
        parser.add_argument("--img_size", type=int, default=32)
        opt = __snlint_parse_args__(parser)
        img_shape = (1, opt.img_size, opt.img_size)
        cuda = True if torch.cuda.is_available() else False
        pass
        """


        """
        class D(nn.Module):
            pass
        """
        """
        pass
    ''')
    assert dropped == 5


def test_every_branch_of_a_module_level_if_runs_in_turn():
    assert copy('''
        if args.arch == "a":
            class A(nn.Module): pass
        elif args.arch == "b":
            class B(nn.Module): pass
        else:
            net = B()
    ''') == textwrap.dedent('''
        if True:
            class A(nn.Module): pass
        if True:
            class B(nn.Module): pass
        if True:
            pass
    ''')


def test_the_main_guard_is_left_out():
    assert copy('''
        class D: pass
        if __name__ == "__main__":
            main()
    ''') == textwrap.dedent('''
        class D: pass
        """
        """
    ''')


def test_a_try_keeps_its_imports_and_drops_its_work():
    assert copy('''
        try:
            from apex import amp
            amp.initialize()
        except ImportError:
            amp = None
    ''') == textwrap.dedent('''
        try:
            from apex import amp
            pass
        except ImportError:
            amp = None
    ''')


def test_parse_known_args_keeps_its_pair():
    assert copy('''
        import argparse
        p = argparse.ArgumentParser()
        args, _ = p.parse_known_args()
    ''') == textwrap.dedent('''
        import argparse
        p = argparse.ArgumentParser()
        args, _ = __snlint_parse_args__(p, known = True)
    ''')


def test_a_type_the_parser_registers_stays_with_its_options():
    # RelativisticGAN: parser.register('type', 'bool', strToBool), then type='bool'.
    # The registered function is the project's: argparse would run it on a string
    # default, so the copy registers `str` in its place.
    source = '''
        import argparse

        def strToBool(s):
            return s.lower() in ('true', 'yes')

        parser = argparse.ArgumentParser()
        parser.register('type', 'bool', strToBool)
        parser.add_argument('--spectral', type='bool', default=False)
        param = parser.parse_args()
    '''
    assert copy(source) == textwrap.dedent(source).replace(
        "parser.parse_args()", "__snlint_parse_args__(parser)").replace(
        "'bool', strToBool)", "'bool', str)")


def test_sys_path_edits_stay_so_the_scripts_imports_resolve():
    assert copy('''
        import os, sys
        sys.path.append(os.path.join(os.path.dirname(__file__), ".."))
        sys.path.append(download_root())
    ''') == textwrap.dedent('''
        import os, sys
        sys.path.append(os.path.join(os.path.dirname(__file__), ".."))
        pass
    ''')


def test_an_if_that_only_chooses_an_import_keeps_its_condition():
    assert copy('''
        NEW = hasattr(torch.nn.utils, "parametrizations")
        if NEW:
            from torch.nn.utils.parametrizations import spectral_norm
        else:
            from torch.nn.utils import spectral_norm
    ''') == textwrap.dedent('''
        NEW = hasattr(torch.nn.utils, "parametrizations")
        if NEW:
            from torch.nn.utils.parametrizations import spectral_norm
        else:
            from torch.nn.utils import spectral_norm
    ''')


def test_a_statement_reading_a_name_only_left_out_code_binds_is_left_out_too():
    assert copy('''
        dataloader = DataLoader(dataset)
        steps = len(dataloader)
        size = 64
    ''') == textwrap.dedent('''
        pass
        pass
        size = 64
    ''')


def test_a_dispatch_on_an_option_with_no_else_takes_its_first_branch_by_default():
    assert copy('''
        if opt.dataset in ["imagenet", "folder"]:
            dataset = dset.ImageFolder(root=opt.dataroot)
            nc = 3
        elif opt.dataset == "mnist":
            nc = 1
    ''') == textwrap.dedent('''
        if (opt.dataset in ["imagenet", "folder"]) or not (opt.dataset == "mnist"):
            pass
            nc = 3
        elif opt.dataset == "mnist":
            nc = 1
    ''')


def test_a_class_body_keeps_its_definitions_and_drops_its_calls():
    assert copy('''
        import shutil
        import torch.nn as nn
        class D(nn.Module):
            shutil.rmtree("samples")
            act = nn.LeakyReLU(0.2)
            def __init__(self):
                super().__init__()
    ''') == textwrap.dedent('''
        import shutil
        import torch.nn as nn
        class D(nn.Module):
            pass
            act = nn.LeakyReLU(0.2)
            def __init__(self):
                super().__init__()
    ''')


def test_a_call_is_pure_only_through_what_the_module_imported():
    assert copy('''
        import shutil as nn
        x = nn.rmtree("samples")
        y = int("3")
    ''') == textwrap.dedent('''
        import shutil as nn
        pass
        y = int("3")
    ''')


def test_a_registry_decorator_stays_and_an_unknown_one_goes_on_the_same_lines():
    assert copy('''
        from registry import MODELS
        @MODELS.register_module()
        @log_calls(
            level=3)
        class D:
            pass
    ''') == textwrap.dedent('''
        from registry import MODELS
        @MODELS.register_module()
        @__snlint_undecorated__("""
        """)
        class D:
            pass
    ''')


def test_a_default_that_calls_is_computed_at_the_first_call_not_at_import():
    assert copy('''
        import os
        def make(norm=get_norm("group"), path=os.remove("x"), n=int("3")):
            pass
    ''') == textwrap.dedent('''
        import os
        def make(norm=__snlint_later__(lambda: (get_norm("group"))), path=__snlint_later__(lambda: (os.remove("x"))), n=int("3")):
            pass
    ''')


def test_an_argparse_type_or_action_that_is_the_projects_code_is_not_run():
    assert copy('''
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--out", type=make_dir, default="out")
        parser.add_argument("--n", type=int, action=Count, default=1)
    ''') == textwrap.dedent('''
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--out", type=None, default="out")
        parser.add_argument("--n", type=int, action="store", default=1)
    ''')


def test_a_class_whose_bases_call_the_project_is_left_out_decorators_and_all():
    assert copy('''
        @register("d")
        class D(make_base()):
            pass
        x = 1
    ''') == textwrap.dedent('''
        """

        """
        x = 1
    ''')


def test_a_registry_made_by_a_call_stays_for_its_decorators():
    assert copy('''
        from mmgen.registry import Registry
        MODELS = Registry("models")
        CACHE = load_cache()
        @MODELS.register_module()
        @CACHE.register()
        class D:
            pass
    ''') == textwrap.dedent('''
        from mmgen.registry import Registry
        MODELS = Registry("models")
        pass
        @MODELS.register_module()
        @__snlint_undecorated__()
        class D:
            pass
    ''')


def test_an_assignment_that_extends_a_left_out_binding_is_left_out_too():
    # `name = name + ".txt"` reads the name it rebinds: kept after its first binding was
    # left out, the copy raised NameError and no class of the module was built.
    assert copy('''
        log_filename = strftime("log/log_%s" % stamp)
        log_filename = log_filename + ".txt"
        log_filename += "_2"
        size = 64
        size = size * 2
    ''') == textwrap.dedent('''
        pass
        pass
        pass
        size = 64
        size = size * 2
    ''')
