"""Which samples a discriminator call scores, decided by where its input came from.

Real: what a data loader yields, `next()` of it, a data parameter, a `dict` batch read by
key. Generated: what any model that is not the discriminator returned, through
`.detach()`, attributes set in another method, unpacking, helpers, in-place copies into a
preallocated buffer. `torch.cat` along channels keeps one batch; only the batch axis joins
real and generated samples. Names decide only where the data flow says nothing.

The samples here are named neutrally (`target`/`output`, `gt`, `hr`/`sr`, `inputv`) unless
a test is about names, so only the data flow can decide.
"""

from __future__ import annotations

import pytest

BN_DISCRIMINATOR = '''
    import torch.nn as nn


    class PatchDiscriminator(nn.Module):
        def __init__(self, ch=3, ndf=64):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(ch, ndf, 4, 2, 1),
                nn.BatchNorm2d(ndf),
                nn.LeakyReLU(0.2),
                nn.Conv2d(ndf, 1, 4, 1, 1),
            )

        def forward(self, x):
            return self.main(x)
'''

IN_DISCRIMINATOR = BN_DISCRIMINATOR.replace("nn.BatchNorm2d(ndf)", "nn.InstanceNorm2d(ndf)")


def found(findings):
    return [(f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings]


def sn401(findings):
    [finding] = [f for f in findings if f.code == "SN401"]
    return finding


# ---------------------------------------------------------------- autoencoder GANs

AUTOENCODER = '''
    import torch
    import torch.nn as nn

    from disc import PatchDiscriminator


    class AdversarialLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.discriminator = PatchDiscriminator()

        def forward(self, target, output, step):
            if step == 0:
                return -self.discriminator(output).mean()
            logits_a = self.discriminator(target.detach())
            logits_b = self.discriminator(output.detach())
            return (torch.relu(1 - logits_a) + torch.relu(1 + logits_b)).mean()


    class AutoEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Conv2d(3, 8, 3, 1, 1)
            self.decoder = nn.Conv2d(8, 3, 3, 1, 1)
            self.loss = AdversarialLoss()

        def forward(self, x):
            return self.decoder(self.encoder(x))

        def training_step(self, batch, step):
            x = batch["image"]
            xrec = self(x)
            return self.loss(x, xrec, step)
'''


def test_autoencoder_loss_module_scoring_its_inputs_and_reconstructions_apart(lint_project):
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "model.py": AUTOENCODER})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "model.py", 16)]
    finding = sn401(findings)
    assert finding.evidence.startswith(
        "real samples (the data parameter `batch`) go through PatchDiscriminator")
    assert "generated samples (returned by self at line 33) in a separate call at line 17" \
        in finding.explanation


def test_autoencoder_loss_module_with_an_instance_norm_discriminator(lint_project):
    findings = lint_project({"disc.py": IN_DISCRIMINATOR, "model.py": AUTOENCODER})
    assert found(findings) == []


def test_loss_module_named_as_taming_names_it_is_found_by_name_alone(lint_project):
    # The loss module's caller builds it from a config snlint cannot read: the forward,
    # run on its own, has only the names `inputs` and `reconstructions` to go by.
    loss = '''
        import torch.nn as nn

        from disc import PatchDiscriminator


        class VQLPIPSWithDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.discriminator = PatchDiscriminator()

            def forward(self, inputs, reconstructions):
                logits_real = self.discriminator(inputs.contiguous().detach())
                logits_fake = self.discriminator(reconstructions.contiguous().detach())
                return logits_real, logits_fake
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "loss.py": loss})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "loss.py", 13)]
    assert sn401(findings).evidence.startswith(
        "real samples (the data parameter `inputs`) go through PatchDiscriminator")
    assert "generated samples (named `reconstructions`)" in sn401(findings).explanation


@pytest.mark.parametrize("scores", [
    "net(a), net(b)",  # the loss module's forward calls the discriminator it is given
    "pair(net, a, b)",  # or hands it on to a function that does
])
def test_loss_module_given_the_discriminator_scores_what_its_caller_passes(lint_project, scores):
    # `criterion(net_d, hr, sr)`: the forward runs with the caller's tensors, as a
    # function given the discriminator would; `a` and `b` say nothing by their names.
    loss = f'''
        import torch.nn as nn


        def pair(net, a, b):
            return net(a), net(b)


        class AdversarialLoss(nn.Module):
            def forward(self, net, a, b):
                d_a, d_b = {scores}
                return (d_b - d_a).mean()
    '''
    train = '''
        import torch
        import torch.nn as nn

        from disc import PatchDiscriminator
        from loss import AdversarialLoss

        net_g = nn.Conv2d(3, 3, 1)
        net_d = PatchDiscriminator()
        criterion = AdversarialLoss()
        opt_d = torch.optim.Adam(net_d.parameters())
        for lr, hr in torch.utils.data.DataLoader(range(8)):
            sr = net_g(lr)
            loss = criterion(net_d, hr, sr.detach())
            opt_d.zero_grad()
            loss.backward()
            opt_d.step()
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "loss.py": loss, "train.py": train})
    line = 11 if scores.startswith("net(") else 6
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "loss.py", line)]
    assert sn401(findings).evidence.startswith(
        "real samples (a batch of `torch.utils.data.DataLoader` (train.py:12)) go through")


# ---------------------------------------------------------------- framework model classes

FRAMEWORK = '''
    from disc import PatchDiscriminator
    from nets import SRNet

    NETWORKS = {"PatchDiscriminator": PatchDiscriminator, "SRNet": SRNet}


    class SRModel:
        def __init__(self, opt):
            self.net_g = NETWORKS[opt["network_g"]]()
            self.net_d = NETWORKS[opt["network_d"]]()

        def feed_data(self, data):
            self.lq = data["lq"]
            self.gt = data["gt"]

        def optimize_parameters(self, current_iter):
            self.output = self.net_g(self.lq)
            self.backward_d()

        def backward_d(self):
            pred_a = self.net_d(self.gt)
            pred_b = self.net_d(self.output.detach())
            return pred_a, pred_b
'''

SRNET = '''
    import torch.nn as nn


    class SRNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Conv2d(3, 3, 3, 1, 1)

        def forward(self, x):
            return self.body(x)
'''


def test_framework_model_with_a_registry_discriminator_and_attributes_set_in_other_methods(
        lint_project):
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "model.py": FRAMEWORK})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "model.py", 22)]
    finding = sn401(findings)
    assert "real samples (the data parameter `data`)" in finding.explanation
    assert "generated samples (returned by self.net_g at line 18)" in finding.explanation


def test_framework_model_whose_generator_is_not_named_as_one(lint_project):
    code = FRAMEWORK.replace("self.net_g", "self.model")
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "model.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "model.py", 22)]
    assert "generated samples (returned by self.model at line 18)" in sn401(findings).explanation


def test_framework_model_whose_registry_discriminator_has_instance_norm(lint_project):
    findings = lint_project({"disc.py": IN_DISCRIMINATOR, "nets.py": SRNET, "model.py": FRAMEWORK})
    assert found(findings) == []


# ---------------------------------------------------------------- tutorial scripts

TUTORIAL = '''
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    from disc import PatchDiscriminator
    from nets import SRNet

    netD = PatchDiscriminator()
    netG = SRNet()
    dataloader = torch.utils.data.DataLoader([], batch_size=64)
    input = torch.FloatTensor(64, 3, 64, 64)
    noise = torch.FloatTensor(64, 3, 64, 64)

    for epoch in range(25):
        data_iter = iter(dataloader)
        i = 0
        while i < len(dataloader):
            data = data_iter.next()
            i += 1
            real_cpu, _ = data
            netD.zero_grad()
            input.resize_as_(real_cpu).copy_(real_cpu)
            inputv = Variable(input)
            errD_a = netD(inputv)
            noise.resize_(64, 3, 64, 64).normal_(0, 1)
            produced = Variable(netG(Variable(noise)).data)
            inputv = produced
            errD_b = netD(inputv)
'''


def test_module_level_script_with_in_place_copies_and_a_rebound_input(lint_project):
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "main.py": TUTORIAL})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "main.py", 25)]
    finding = sn401(findings)
    assert "real samples (a batch of `dataloader` (line 16))" in finding.explanation
    assert "generated samples (returned by netG at line 27) in a separate call at line 29" \
        in finding.explanation



# GANotebooks' wgan-torch: the real batch is a slice of a global NumPy array, which the
# link does not follow; the variable is named for what it holds, and the buffer it is
# copied into holds it too.
NUMPY_BATCHES = TUTORIAL.replace("""            data = data_iter.next()
            i += 1
            real_cpu, _ = data
            netD.zero_grad()
            input.resize_as_(real_cpu).copy_(real_cpu)""", """            real_data = torch.from_numpy(np.moveaxis(train_X[i * 64:(i + 1) * 64], 3, 1))
            i += 1
            netD.zero_grad()
            input.resize_as_(real_data).copy_(real_data)""").replace(
    "from torch.autograd import Variable\n", "from torch.autograd import Variable\n    import numpy as np\n")


def test_a_batch_the_link_cannot_follow_is_real_by_the_variables_name(lint_project):
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "main.py": NUMPY_BATCHES})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "main.py", 25)]
    assert "real samples (named `real_data`) go through PatchDiscriminator" in sn401(findings).explanation


def test_a_loader_named_for_real_samples_still_yields_batches_of_the_data(lint_project):
    # cartoon-gan: `real_dataloader = get_dataloader(...)` (a helper the link does not
    # follow), zipped with another loader; its batches are real as a loader's.
    code = '''
        import torch

        from datasets import get_dataloader
        from disc import PatchDiscriminator
        from nets import SRNet

        netD, netG = PatchDiscriminator(), SRNet()
        real_dataloader = get_dataloader("real")
        cartoon_dataloader = get_dataloader("cartoon")
        for i, (edges, real_data) in enumerate(zip(cartoon_dataloader, real_dataloader)):
            fake = netG(real_data)
            d_real = netD(real_data)
            d_fake = netD(fake.detach())
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "main.py": code})
    assert "real samples (a batch of `cartoon_dataloader` (line 11))" in sn401(findings).explanation


def test_a_variable_with_a_vaguer_name_stays_unknown(lint_project):
    # `x`, `data`, `batch` are read as real only where they are scored.
    code = NUMPY_BATCHES.replace("real_data", "x_np")
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "main.py": code})
    assert found(findings) == [("SN301", "disc.py", 10)]


def test_module_level_copies_through_a_buffers_data(lint_project):
    # DCPDN: `target.data.resize_as_(target_cpu).copy_(target_cpu)` at module level.
    code = TUTORIAL.replace("input.resize_as_(real_cpu).copy_(real_cpu)",
                            "input.data.resize_as_(real_cpu).copy_(real_cpu)")
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "main.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "main.py", 25)]
    assert "real samples (a batch of `dataloader` (line 16))" in sn401(findings).explanation

def test_in_place_copy_into_an_attribute_buffer(lint_project):
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet


        class Trainer:
            def __init__(self):
                self.d = PatchDiscriminator()
                self.g = SRNet()
                self.buf = torch.zeros(8, 3, 32, 32)

            def step(self, loader):
                for batch in loader:
                    self.buf.data.copy_(batch)
                    a = self.d(self.buf)
                    self.buf.copy_(self.g(batch).detach())
                    b = self.d(self.buf)
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 17)]


# ---------------------------------------------------------------- concatenation

PIX2PIX = '''
    import torch

    from disc import PatchDiscriminator
    from nets import SRNet

    netD = PatchDiscriminator(ch=6)
    netG = SRNet()
    loader = torch.utils.data.DataLoader([])
    for cond, target in loader:
        produced = netG(cond)
        {body}
'''


def test_conditional_pairs_concatenated_along_channels_are_two_separate_batches(lint_project):
    body = '''pred_b = netD(torch.cat((cond, produced.detach()), 1))
        pred_a = netD(torch.cat((cond, target), 1))'''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET,
                             "train.py": PIX2PIX.format(body=body)})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 12)]
    assert sn401(findings).evidence.startswith(
        "generated samples (returned by netG at line 11, concatenated along channels at line 12)")


def test_pairs_named_real_and_fake_along_channels_are_not_scored_together(lint_project):
    # mrzhu-cool/pix2pix-pytorch: `fake_ab = cat((real_a, fake_b), 1)` is named both, but
    # it is one generated batch; the evidence must not say the two are scored together.
    code = PIX2PIX.replace("cond, target", "real_a, real_b").replace("netG(cond)", "netG(real_a)")
    body = '''pred_fake = netD(torch.cat((real_a, produced.detach()), 1))
        pred_real = netD(torch.cat((real_a, real_b), 1))'''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET,
                             "train.py": code.format(body=body)})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 12)]
    assert sn401(findings).discriminator.detail == "called on real and generated samples at module level"


def test_a_generator_step_before_the_discriminator_step_does_not_speak_for_the_class(lint_project):
    # BicycleGAN: the generator step scores `cat((real_a, fake_b), 1)` (named both, one
    # generated batch); the discriminator step's separate real and generated calls are
    # the evidence the message gives.
    code = PIX2PIX.replace("cond, target", "real_a, real_b").replace("netG(cond)", "netG(real_a)")
    body = '''pred_g = netD(torch.cat((real_a, produced), 1))
        optimizer_g.step()
        pred_fake = netD(torch.cat((real_a, produced.detach()), 1))
        pred_real = netD(torch.cat((real_a, real_b), 1))'''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET,
                             "train.py": code.format(body=body)})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 14)]
    assert sn401(findings).discriminator.detail == "called on real and generated samples at module level"


def test_conditional_pairs_joined_along_the_batch_are_one_batch(lint_project):
    body = '''pairs = torch.cat((torch.cat((cond, target), 1), torch.cat((cond, produced.detach()), 1)))
        pred = netD(pairs)'''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET,
                             "train.py": PIX2PIX.format(body=body)})
    assert found(findings) == [("SN301", "disc.py", 10)]


def test_conditional_pairs_scored_apart_by_an_instance_norm_discriminator(lint_project):
    body = '''pred_b = netD(torch.cat((cond, produced.detach()), 1))
        pred_a = netD(torch.cat((cond, target), 1))'''
    findings = lint_project({"disc.py": IN_DISCRIMINATOR, "nets.py": SRNET,
                             "train.py": PIX2PIX.format(body=body)})
    assert found(findings) == []


def test_a_batch_axis_given_by_keyword_joins(lint_project):
    body = '''pred = netD(torch.cat([target, produced.detach()], dim=0))'''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET,
                             "train.py": PIX2PIX.format(body=body)})
    assert found(findings) == [("SN301", "disc.py", 10)]


# ---------------------------------------------------------------- losses and names

def test_relativistic_loss_scoring_data_and_generator_output_apart(lint_project):
    code = '''
        import torch
        import torch.nn.functional as F

        from disc import PatchDiscriminator
        from nets import SRNet

        critic = PatchDiscriminator()
        upscaler = SRNet()
        loader = torch.utils.data.DataLoader([])
        for lr, hr in loader:
            sr = upscaler(lr)
            d_hr = critic(hr)
            d_sr = critic(sr.detach())
            loss = F.softplus(-(d_hr - d_sr.mean())).mean() + F.softplus(d_sr - d_hr.mean()).mean()
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 13)]
    assert "generated samples (returned by upscaler at line 12)" in sn401(findings).explanation


def test_frozen_feature_network_output_is_not_generated(lint_project):
    # `features(x)` of a frozen network is still the data it was given: scoring it and the
    # data itself is not a real/fake pair.
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet


        class Trainer:
            def __init__(self):
                self.critic = PatchDiscriminator()
                self.features = SRNet()
                self.features.requires_grad_(False)

            def step(self, loader):
                for x in loader:
                    a = self.critic(x)
                    b = self.critic(self.features(x))
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10)]


def test_data_flow_overrides_a_misleading_name(lint_project):
    # `real_batch` holds the generator's output here: both calls score generated samples.
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet

        critic = PatchDiscriminator()
        g = SRNet()
        loader = torch.utils.data.DataLoader([])
        for x in loader:
            fake_a = g(x)
            real_batch = g(fake_a)
            a = critic(fake_a.detach())
            b = critic(real_batch.detach())
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10)]


def test_next_of_an_iterator_over_the_loader_is_real(lint_project):
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet

        critic = PatchDiscriminator()
        g = SRNet()
        loader = torch.utils.data.DataLoader([])
        it = iter(loader)
        for step in range(100):
            x = next(it)
            a = critic(x)
            b = critic(g(x).detach())
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 13)]
    assert "real samples (a batch of `loader` (line 10))" in sn401(findings).explanation


def test_two_discriminators_of_one_class_each_pair_their_own_calls(lint_project):
    # MUNIT's `dis_a` and `dis_b`: each scores the generated then the real samples of its
    # domain; the pairs are within one instance, so one finding, on the first call.
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet


        def dis_loss(dis, input_a, input_b):
            out_a = dis(input_a)
            out_b = dis(input_b)
            return out_a.mean() - out_b.mean()


        dis_a, dis_b = PatchDiscriminator(), PatchDiscriminator()
        gen_ab, gen_ba = SRNet(), SRNet()
        loader = torch.utils.data.DataLoader([])
        for x_a, x_b in loader:
            x_ab, x_ba = gen_ab(x_a), gen_ba(x_b)
            loss = dis_loss(dis_a, x_ba.detach(), x_a) + dis_loss(dis_b, x_ab.detach(), x_b)
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 9)]
    assert sn401(findings).evidence.startswith(
        "generated samples (returned by gen_ba at line 18) go through PatchDiscriminator")


def test_a_discriminator_method_called_from_another_file_reports_in_its_own_file(lint_project):
    disc = BN_DISCRIMINATOR + '''
        def calc_dis_loss(self, input_fake, input_real):
            return self(input_fake).mean() - self(input_real).mean()
    '''
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet

        dis, gen = PatchDiscriminator(), SRNet()
        for x in torch.utils.data.DataLoader([]):
            loss = dis.calc_dis_loss(gen(x).detach(), x)
    '''
    findings = lint_project({"disc.py": disc, "nets.py": SRNET, "train.py": code})
    assert [(f.code, f.path, f.line) for f in findings] == [("SN301", "disc.py", 10),
                                                           ("SN401", "disc.py", 19)]


def test_a_class_defined_under_the_main_guard_and_trained_there(lint_project):
    # A self-test at the bottom of a utilities module: the class lives in no module
    # namespace, and the run goes on.
    code = '''
        import torch
        import torch.nn as nn

        if __name__ == "__main__":
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))

                def forward(self, x):
                    return self.body(x)

            net = Net()
            for x in torch.utils.data.DataLoader([]):
                a = net(x)
                b = net(net(x).detach())
    '''
    findings = lint_project({"utils_model.py": code})
    assert found(findings) == []


def test_dunder_next_of_a_generator_over_the_loader_is_real(lint_project):
    # pytorch-wgan's trainer: an endless generator over the loader, read with `__next__()`.
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet


        def endless(data_loader):
            while True:
                for tgt, _ in data_loader:
                    yield tgt


        critic = PatchDiscriminator()
        g = SRNet()
        batches = endless(torch.utils.data.DataLoader([]))
        for step in range(100):
            tgt = batches.__next__()
            a = critic(tgt)
            b = critic(g(tgt).detach())
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 19)]
    assert sn401(findings).evidence.startswith("real samples (next() at line 18) go through")


def test_data_parallel_function_calls_its_module_on_its_inputs(lint_project):
    # StackGAN: `nn.parallel.data_parallel(netD, (real_imgs), gpus)` runs netD(real_imgs).
    code = '''
        import torch.nn as nn


        def discriminator_loss(critic, tgt, out, gpus):
            a = nn.parallel.data_parallel(critic, (tgt), gpus)
            b = nn.parallel.data_parallel(critic, (out.detach(),), gpus)
            return a.mean() - b.mean()
    '''
    train = '''
        import torch

        from disc import PatchDiscriminator
        from losses import discriminator_loss
        from nets import SRNet


        critic = PatchDiscriminator()
        g = SRNet()
        for tgt, z in torch.utils.data.DataLoader([]):
            loss = discriminator_loss(critic, tgt, g(z), [0])
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "losses.py": code,
                             "train.py": train})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "losses.py", 6)]
    assert sn401(findings).evidence.startswith("real samples (a batch of `torch.utils.data.DataLoader")


def test_a_prefetcher_whose_except_handler_clears_the_batch_keeps_the_loader_batch(lint_project):
    # SRGAN-PyTorch's CUDAPrefetcher: `try: self.batch_data = next(self.data)` with an
    # `except StopIteration: self.batch_data = None`; the handler is the end of an epoch,
    # not what every batch is.
    prefetcher = '''
        import torch


        class CUDAPrefetcher:
            def __init__(self, dataloader):
                self.batch_data = None
                self.data = iter(dataloader)
                self.preload()

            def preload(self):
                try:
                    self.batch_data = next(self.data)
                except StopIteration:
                    self.batch_data = None
                    return None

            def next(self):
                batch_data = self.batch_data
                self.preload()
                return batch_data
    '''
    train = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet
        from prefetch import CUDAPrefetcher


        def train(g, critic, prefetcher):
            batch = prefetcher.next()
            while batch is not None:
                tgt = batch["gt"].to("cuda", non_blocking=True)
                out = g(batch["lr"])
                a = critic(tgt)
                b = critic(out.detach().clone())
                batch = prefetcher.next()


        train(SRNet(), PatchDiscriminator(), CUDAPrefetcher(torch.utils.data.DataLoader([])))
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "prefetch.py": prefetcher,
                             "train.py": train})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 14)]
    assert sn401(findings).evidence.startswith("real samples (a batch of `dataloader` (prefetch.py:8)) go through")



def test_one_call_run_once_for_each_side_by_a_loop(lint_project):
    # `for batch, target in [(real, 1.0), (fake, 0.0)]: out = netD(batch)`: one call site,
    # two batches; no second call to merge with, so no fix.
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet


        critic = PatchDiscriminator()
        g = SRNet()
        for tgt in torch.utils.data.DataLoader([]):
            out = g(tgt).detach()
            for batch, label in [(tgt, 1.0), (out, 0.0)]:
                score = critic(batch)
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 13)]
    finding = sn401(findings)
    assert "go through PatchDiscriminator" in finding.explanation
    assert "here, one batch per run of this call;" in finding.explanation
    assert finding.fix is None


def test_map_of_the_discriminator_over_both_batches(lint_project):
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet


        critic = PatchDiscriminator()
        g = SRNet()
        for tgt in torch.utils.data.DataLoader([]):
            out = g(tgt).detach()
            score_a, score_b = map(critic, [tgt, out])
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 12)]


def test_a_list_of_detached_generator_outputs_is_generated(lint_project):
    # FastGAN: `train_d(netD, [fi.detach() for fi in fake_images], label="fake")`, the
    # discriminator taking a list of scales; the helper's parameter is named `data`.
    code = '''
        import torch

        from disc import PatchDiscriminator
        from nets import SRNet


        def train_d(net, data, label="real"):
            if label == "real":
                return net(data).mean()
            return net(data).mean()


        critic = PatchDiscriminator()
        g = SRNet()
        for tgt in torch.utils.data.DataLoader([]):
            outs = g(tgt)
            train_d(critic, tgt, label="real")
            train_d(critic, [o.detach() for o in outs], label="fake")
    '''
    findings = lint_project({"disc.py": BN_DISCRIMINATOR, "nets.py": SRNET, "train.py": code})
    assert found(findings) == [("SN301", "disc.py", 10), ("SN401", "train.py", 10)]
    assert "generated samples (returned by g at line 17)" in sn401(findings).explanation


def test_a_batch_fetched_from_a_project_loader_by_its_method_is_real(lint_project):
    # videogan: its own `DataLoader` class hands out batches with `get_batch()`; what the
    # method returns is not followed (the class reads files), the data source is.
    findings = lint_project({
        "data_loader.py": '''
            class DataLoader(object):
                def __init__(self, root):
                    self.files = sorted(root)

                def get_batch(self):
                    return load(self.files)
        ''',
        "main.py": '''
            import torch
            import torch.nn as nn
            from data_loader import DataLoader


            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv3d(3, 8, 3)
                    self.bn = nn.BatchNorm3d(8)

                def forward(self, x):
                    return self.bn(self.conv(x))


            discriminator = Discriminator()
            generator = nn.Conv3d(3, 3, 3)
            d_optim = torch.optim.Adam(discriminator.parameters())
            dataloader = DataLoader("videos")
            for epoch in range(10):
                videos = dataloader.get_batch()
                outputs = discriminator(videos)
                outputs_fake = discriminator(generator(videos[:, :, 0:1]).detach())
                loss = outputs.mean() - outputs_fake.mean()
                d_optim.zero_grad()
                loss.backward()
                d_optim.step()
        ''',
    })
    sn401 = [f for f in findings if f.code == "SN401"]
    assert [(f.path, f.line) for f in sn401] == [("main.py", 23)]
    assert sn401[0].evidence.startswith("real samples (a batch of `dataloader` (line 22)) go through Discriminator")


def test_where_nothing_else_says_the_name_a_score_is_given_does(lint):
    # DiscoGAN / DistanceGAN: images read by a helper from file lists, named for their
    # domain (`A`, `B`); only the scores are named real and fake.
    findings = lint('''
        import numpy as np
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 4)
                self.bn = nn.BatchNorm2d(8)

            def forward(self, x):
                h = self.bn(self.conv(x))
                return h.mean(), [h]


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3)

            def forward(self, x):
                return self.conv(x)


        class DiscoGAN:
            def initialize(self, paths):
                self.paths = paths
                self.generator_A = Generator()
                self.discriminator_A = Discriminator()
                self.optim_dis = torch.optim.Adam(self.discriminator_A.parameters())

            def get_images(self):
                return np.stack([np.load(p) for p in self.paths])

            def run(self):
                A = torch.FloatTensor(self.get_images())
                BA = self.generator_A(torch.randn(4, 3, 8, 8))
                A_dis_real, A_feats_real = self.discriminator_A(A)
                A_dis_fake, A_feats_fake = self.discriminator_A(BA)
                dis_loss = A_dis_fake - A_dis_real
                self.optim_dis.zero_grad()
                dis_loss.backward()
                self.optim_dis.step()
    ''')
    sn401 = [f for f in findings if f.code == "SN401"]
    assert [(f.code, f.line) for f in sn401] == [("SN401", 40)]
    assert sn401[0].evidence.startswith("real samples (scored into `A_dis_real`) go through Discriminator")


def test_ground_truth_named_gts_is_real(lint):
    # RestoreFormer++: a loss module built from a config string, read on its own; its
    # discriminator step scores `gts` and `reconstructions`.
    findings = lint('''
        import torch.nn as nn


        class NLayerDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

            def forward(self, x):
                return self.main(x)


        class VQLPIPSWithDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.discriminator = NLayerDiscriminator()

            def forward(self, gts, reconstructions, optimizer_idx):
                if optimizer_idx == 1:
                    logits_real = self.discriminator(gts.contiguous().detach())
                    logits_fake = self.discriminator(reconstructions.contiguous().detach())
                    return (logits_fake - logits_real).mean()
    ''')
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 21)]


def test_a_constant_is_no_samples_whatever_its_name(lint):
    # Face-Renovation: `F_real = torch.ones_like(F_fake)` is a target, not a real batch.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(1, 8, 3), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 3))

            def forward(self, x):
                return self.main(x)


        class Predictor(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Conv2d(3, 1, 3)
                self.discriminator = Discriminator()

            def update_D(self, bundle):
                F_fake = self.net(bundle)
                F_real = torch.ones_like(F_fake, requires_grad=False)
                pred_real = self.discriminator(F_real)
                pred_fake = self.discriminator(F_fake.detach())
                return pred_real.mean() - pred_fake.mean()
    ''')
    assert [f.code for f in findings if f.code == "SN401"] == []


TRANSFORMED = '''
    import torch.nn as nn


    class SketchNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 3))

        def forward(self, x):
            return self.net(x)


    class OutputTransform(nn.Module):
        def __init__(self, process):
            super().__init__()
            self.sketch = SketchNet()
            self.process = process

        def forward(self, x):
            return self.sketch(x)


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x)


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 1, 3)

        def forward(self, x):
            return self.conv(x)


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.netG = nn.Conv2d(3, 3, 3)
            self.tf_fake = OutputTransform("toSketch")
            self.tf_real = OutputTransform("to3ch")
            self.netD_sketch = Critic()
            self.criterionGAN = GANLoss()

        def discriminator_loss(self, real_sketch, real_image):
            fake_image = self.netG(real_image).detach()
            fake_transf = self.tf_fake(fake_image)
            real_transf = self.tf_real(real_sketch)
            pred_fake = self.netD_sketch(fake_transf)
            pred_real = self.netD_sketch(real_transf)
            return self.criterionGAN(pred_fake, False) + self.criterionGAN(pred_real, True)


    class GANLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.loss = nn.MSELoss()

        def forward(self, prediction, target_is_real):
            return self.loss(prediction, prediction.detach() * 0 + float(target_is_real))
'''


def test_a_model_whose_output_the_discriminator_scores_is_no_discriminator(lint):
    # GANSketching: a sketch network turns generated images into sketches before the
    # discriminator scores them beside real sketches; it is called on both sides (two
    # instances of one class), but what it returns is what the discriminator sees.
    assert [(f.code, f.line) for f in lint(TRANSFORMED)] == []


def test_the_discriminator_fed_by_a_transform_is_still_judged(lint):
    # The same program with batch norm in the model the transform feeds: its separate calls
    # are reported (a loss module fed by the discriminator changes nothing).
    code = TRANSFORMED.replace("self.conv = nn.Conv2d(1, 1, 3)\n",
                               "self.conv = nn.Conv2d(1, 1, 3)\n            self.bn = nn.BatchNorm2d(1)\n"
                               ).replace("return self.conv(x)", "return self.bn(self.conv(x))")
    assert [(f.code, f.line) for f in lint(code)] == [("SN301", 37), ("SN401", 56)]


def test_a_sample_passed_by_keyword_is_what_the_call_scores(lint):
    # deep_privacy2: the loss's `forward_D` passes the image by the name of the
    # discriminator forward's first parameter, beside the batch's other entries.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.bn = nn.BatchNorm2d(8)

            def forward(self, img, **kwargs):
                return dict(logits=self.bn(self.conv(img)))


        class Loss:
            def __init__(self, D, G):
                self.D = D
                self.G = G

            def forward_D(self, img, batch, fnet_grad):
                return self.D(**batch, img=img, fnet_grad=fnet_grad)

            def D_loss(self, batch):
                real_logits = self.forward_D(batch["img"], batch, False)["logits"]
                with torch.no_grad():
                    fake_img = self.G(**batch)["img"]
                fake_logits = self.forward_D(fake_img, batch, False)["logits"]
                return (fake_logits - real_logits).mean()


        loss = Loss(Discriminator(), nn.Conv2d(3, 3, 3))
    ''')
    assert [(f.code, f.line) for f in findings] == [("SN301", 10), ("SN401", 25)]
    assert "generated samples (returned by self.G at line 27) in a separate call at line 28" in sn401(findings).explanation


def test_a_discriminator_that_scores_its_features_with_its_own_head_is_still_one(lint):
    # Obj-GAN: `netObjD(imgs, ...)` pools features its own `COND_DNET` then scores; a
    # model feeding one of its own modules is not a transform of another model's input.
    findings = lint('''
        import torch.nn as nn


        class CondHead(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 1)

            def forward(self, feat, c):
                return self.fc(feat + c)


        class OBJ_SS_D_NET(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.bn = nn.BatchNorm2d(8)
                self.COND_DNET = CondHead()

            def forward(self, x):
                return self.bn(self.conv(x)).mean((2, 3))


        def objD_loss(netObjD, netG, real_imgs, noise, c):
            real_features = netObjD(real_imgs)
            fake_features = netObjD(netG(noise).detach())
            real_logits = netObjD.COND_DNET(real_features, c)
            fake_logits = netObjD.COND_DNET(fake_features, c)
            return (fake_logits - real_logits).mean()


        loss = objD_loss(OBJ_SS_D_NET(), nn.Linear(4, 3), None, None, None)
    ''')
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 26)]


MONAI_STEP = '''
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader
    from tqdm import tqdm


    class PatchDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

        def forward(self, x):
            return [self.main(x)]


    class AutoencoderKL(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)

        def forward(self, x):
            return self.conv(x)


    train_loader = DataLoader(train_ds, batch_size=64, shuffle=True)
    model = AutoencoderKL()
    discriminator = PatchDiscriminator()
    for epoch in range(10):
        progress_bar = tqdm(enumerate(train_loader), total=len(train_loader))
        for step, batch in progress_bar:
            images = batch["image"]
            reconstruction = model(images)
            logits_fake = discriminator(reconstruction.contiguous().detach()){index}
            logits_real = discriminator(images.contiguous().detach()){index}
            (logits_fake.mean() - logits_real.mean()).backward()
'''


def test_a_loaders_batches_kept_in_a_variable_are_real(lint):
    # MONAI's tutorials: `progress_bar = tqdm(enumerate(train_loader))`, then
    # `for step, batch in progress_bar`.
    findings = lint(MONAI_STEP.format(index=""))
    assert [(f.code, f.line) for f in findings] == [("SN301", 11), ("SN401", 34)]
    assert "real samples (a batch of `train_loader` (line 30))" in sn401(findings).explanation


def test_one_item_of_what_a_discriminator_returns_is_scored_into_its_name(lint):
    # MONAI's PatchDiscriminator returns each layer's output: `logits_real = D(x)[-1]`.
    findings = lint(MONAI_STEP.format(index="[-1]").replace(
        "progress_bar = tqdm(enumerate(train_loader), total=len(train_loader))", "progress_bar = read_batches()"))
    assert [(f.code, f.line) for f in findings] == [("SN301", 11), ("SN401", 34)]
    assert "real samples (scored into `logits_real`)" in sn401(findings).explanation


def test_a_progress_bar_over_a_range_holds_no_batches(lint):
    # VQGAN-pytorch: `with tqdm(range(len(train_dataset))) as pbar:` counts steps; the
    # batches come from the dataset the loop zips with it.
    findings = lint(MONAI_STEP.format(index="").replace(
        "        progress_bar = tqdm(enumerate(train_loader), total=len(train_loader))\n"
        "        for step, batch in progress_bar:",
        "        with tqdm(range(len(train_loader))) as pbar:\n"
        "            for step, batch in zip(pbar, train_loader):").replace(
        "            images = batch", "                images = batch").replace(
        "            reconstruction", "                reconstruction").replace(
        "            logits_", "                logits_").replace(
        "            (logits_", "                (logits_"))
    assert [(f.code, f.line) for f in findings] == [("SN301", 11), ("SN401", 34)]
    assert "real samples (a batch of `train_loader` (line 31))" in sn401(findings).explanation


def test_a_trunk_one_instance_of_which_feeds_the_head_on_both_sides_is_the_discriminator(lint):
    # InfoGAN (pianomania): the discriminator is a `FrontEnd` trunk, with batch norm, and a
    # `D` head scoring its features; one trunk runs on real and on generated images.
    findings = lint('''
        import torch
        import torch.nn as nn


        class FrontEnd(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(1, 64, 4), nn.BatchNorm2d(64), nn.Conv2d(64, 128, 4))

            def forward(self, x):
                return self.main(x)


        class D(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(128, 1, 1), nn.Sigmoid())

            def forward(self, x):
                return self.main(x)


        class Trainer:
            def __init__(self, G, FE, D):
                self.G, self.FE, self.D = G, FE, D

            def train(self, dataloader, optimD):
                for x, _ in dataloader:
                    fe_out1 = self.FE(x)
                    probs_real = self.D(fe_out1)
                    (1 - probs_real).mean().backward()
                    fake_x = self.G(torch.randn(8, 62, 1, 1))
                    fe_out2 = self.FE(fake_x.detach())
                    probs_fake = self.D(fe_out2)
                    probs_fake.mean().backward()
                    optimD.step()


        Trainer(nn.ConvTranspose2d(62, 1, 4), FrontEnd(), D()).train(loader, optim)
    ''')
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN401", 30)]


# ---------------------------------------------------------------- unpaired translation

TRANSLATION = '''
    import torch
    import torch.nn as nn


    class MsImageDis(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 1))

        def forward(self, x):
            return self.net(x)

        def calc_dis_loss(self, a, b):
            out0 = self.forward(a)
            out1 = self.forward(b)
            return torch.mean(out0 ** 2) + torch.mean((out1 - 1) ** 2)


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Conv2d(8, 3, 1)

        def forward(self, c):
            return self.net(c)


    class AutoEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Conv2d(3, 8, 1)
            self.dec = Decoder()

        def encode(self, x):
            return self.enc(x)

        def decode(self, c):
            return self.dec(c)


    def train(loader):
        ae = AutoEncoder()
        dis = MsImageDis()
        opt = torch.optim.Adam(dis.parameters())
        for x_a, x_b in loader:
            x_ba = ae.decode(ae.encode(x_b))
            loss = dis.calc_dis_loss(x_ba.detach(), x_a)
            opt.zero_grad()
            loss.backward()
            opt.step()
'''


def test_a_translation_decoded_from_a_real_batch_is_generated(lint):
    # MUNIT/UNIT: `gen_a.decode(gen_b.encode(x_b))`, models no name calls generators, scored
    # against x_a in the discriminator's own loss method. The translation's tags are x_b's
    # (real); the data flow says the decoder made it.
    findings = lint(TRANSLATION)
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN401", 15)]
    assert "generated samples (returned by self.dec at line 39)" in sn401(findings).explanation
    assert sn401(findings).discriminator.evidence == "training code"



SAMPLER = '''
    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 1))

        def forward(self, x):
            return self.net(x)


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.ConvTranspose2d(8, 3, 4))

        def forward(self, z):
            return self.main(z)

        def sample(self, n):
            return self.main(torch.randn(n, 8, 1, 1))


    def train(loader):
        g = Generator()
        d = Discriminator()
        opt = torch.optim.Adam(d.parameters())
        for x in loader:
            out = g.sample(x.size(0))
            s1 = d(x)
            s2 = d(out.detach())
            (s1.mean() - s2.mean()).backward()
            opt.step()
'''


def test_what_a_generators_own_sampling_method_returns_is_generated(lint):
    # `g.sample(n)` runs torch layers on noise: no tags, no module output; the method of a
    # generator returns generated samples as its forward does.
    findings = lint(SAMPLER)
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN401", 33)]
    assert "generated samples (returned by g.sample at line 32)" in sn401(findings).explanation


def test_a_method_of_a_model_no_name_calls_a_generator_adds_nothing(lint):
    code = SAMPLER.replace("class Generator(", "class Sampler(").replace("g = Generator()", "s = Sampler()") \
        .replace("g.sample(", "s.sample(")
    assert [(f.code, f.line) for f in lint(code)] == [("SN301", 9)]


# ---------------------------------------------------------------- a discriminator in two steps

TWO_STEP = '''
    import torch
    import torch.nn as nn


    class CondLogits(nn.Module):
        def __init__(self):
            super().__init__()
            self.joint = nn.Sequential(nn.Conv2d(12, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.2))
            self.out = nn.Conv2d(8, 1, 4, 4)

        def forward(self, h, c):
            return self.out(self.joint(torch.cat((h, c.repeat(1, 1, 4, 4)), 1))).view(-1)


    class NetD(nn.Module):
        def __init__(self):
            super().__init__()
            self.encode = nn.Sequential(nn.Conv2d(3, 8, 4, 4), nn.BatchNorm2d(8), nn.LeakyReLU(0.2))
            self.cond_logits = CondLogits()

        def forward(self, x):
            return self.encode(x)


    def train(netG, loader, opt):
        netD = {build}
        for imgs, cond in loader:
            fake = netG(torch.randn(imgs.size(0), 10), cond)
            h_a = netD(imgs)
            h_b = netD(fake.detach())
            s_a = netD.cond_logits(h_a, cond)
            s_b = netD.cond_logits(h_b, cond)
            s_w = netD.cond_logits(h_a[:-1], cond[1:])
            loss = s_b.mean() + s_w.mean() - s_a.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
'''


def test_a_head_scoring_the_trunks_features_scores_the_trunks_batches(lint):
    # StackGAN/AttnGAN: `netD(x)` returns features its `get_cond_logits` head scores with
    # the caption, real pairs, wrong pairs and fake pairs each in a call of its own. The
    # head's batch norm sees the trunk's real and generated features apart: a second pair.
    findings = lint(TWO_STEP.format(build="NetD()"))
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 30), ("SN401", 32)]
    assert "real samples (a batch of `loader` (line 28), as features of netD at line 30) go through " \
        "CondLogits here and generated samples (returned by netG at line 29, as features of netD at " \
        "line 31) in a separate call at line 33" in [f for f in findings if f.line == 32][0].explanation


def test_a_head_scores_the_batches_of_a_trunk_known_by_its_class(lint):
    # InfoGAN's split: a `Discriminator` trunk, bound to a plain name, and a `DHead` with
    # batch norm scoring its features, real and generated in calls of their own.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)

            def forward(self, x):
                return torch.relu(self.conv(x))


        class DHead(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(64, 128, 4, 2, 1), nn.BatchNorm2d(128), nn.Conv2d(128, 1, 8))

            def forward(self, h):
                return self.main(h)


        def train(loader, netG, opt):
            trunk = Discriminator()
            head = DHead()
            for real, _ in loader:
                fake = netG(torch.randn(real.size(0), 8))
                d_real = head(trunk(real))
                d_fake = head(trunk(fake.detach()))
                loss = torch.relu(1 - d_real).mean() + torch.relu(1 + d_fake).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
    ''')
    assert [(f.code, f.line) for f in findings] == [("SN301", 18), ("SN401", 29)]
    assert "real samples (a batch of `loader` (line 27), as features of trunk at line 29) go through DHead" \
        in sn401(findings).explanation


def test_a_head_of_one_of_several_discriminator_classes_is_that_classs_head(lint):
    # AttnGAN: `netD` is D_NET64, D_NET128 or D_NET256 as a config picks; `netD.COND_DNET`
    # is the head of whichever it is.
    code = TWO_STEP.format(build="(NetD if size == 64 else NetD2)()").replace(
        "    def train(", "    class NetD2(NetD):\n        pass\n\n\n    def train(")
    findings = lint(code)
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 34), ("SN401", 36)]


def test_a_separate_head_module_run_by_a_helper_scores_each_batch_apart(lint):
    # DF-GAN: `predict_loss(netC, netD(imgs), sent)` for real, mismatched and generated
    # features, with the matching-aware gradient penalty taken on the real run's output.
    findings = lint('''
        import torch
        import torch.nn as nn


        class NetD(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 4, 4)

            def forward(self, x):
                return self.conv(x)


        class NetC(nn.Module):
            def __init__(self):
                super().__init__()
                self.joint = nn.Sequential(nn.Conv2d(12, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

            def forward(self, out, y):
                return self.joint(torch.cat((out, y.repeat(1, 1, 4, 4)), 1))


        def predict_loss(predictor, img_feature, text_feature):
            output = predictor(img_feature, text_feature)
            return output, torch.relu(1.0 - output).mean()


        def train(loader, netG, netD, netC, opt):
            for imgs, sent in loader:
                imgs = imgs.requires_grad_()
                real_features = netD(imgs)
                pred_real, err_real = predict_loss(netC, real_features, sent)
                mis_features = torch.cat((real_features[1:], real_features[0:1]), dim=0)
                _, err_mis = predict_loss(netC, mis_features, sent)
                fake = netG(torch.randn(imgs.size(0), 100), sent)
                fake_features = netD(fake.detach())
                _, err_fake = predict_loss(netC, fake_features, sent)
                grads = torch.autograd.grad(outputs=pred_real, inputs=(imgs, sent),
                                            grad_outputs=torch.ones(pred_real.size()),
                                            retain_graph=True, create_graph=True)
                loss = err_real + (err_fake + err_mis) / 2.0 + grads[0].pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()


        train(loader, nn.Linear(100, 3), NetD(), NetC(), opt)
    ''')
    assert [(f.code, f.line) for f in findings] == [("SN301", 18), ("SN303", 25), ("SN401", 35)]
    assert sn401(findings).message == \
        "real samples here and generated samples at line 38 go through NetC as separate batches"


def test_a_penalty_on_the_first_run_of_a_helper_is_that_runs(lint):
    # The helper's call returns one output per run: the penalty on the real run's score
    # leaves the generated run's call an ordinary one, paired with the real one.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

            def forward(self, x):
                return self.main(x)


        def score(net, x):
            return net(x)


        def train(loader, netG, netD, opt):
            for x, _ in loader:
                x = x.requires_grad_()
                d_real = score(netD, x)
                d_fake = score(netD, netG(torch.randn(x.size(0), 8)).detach())
                grad = torch.autograd.grad(d_real.sum(), x, create_graph=True)[0]
                loss = d_fake.mean() - d_real.mean() + grad.pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()


        train(loader, nn.Linear(8, 3), Critic(), opt)
    ''')
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN303", 16), ("SN401", 22)]


TRUNK_AND_HEAD_PENALTY = '''
    import torch
    import torch.nn as nn


    class NetD(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 8, 4, 4), nn.BatchNorm2d(8), nn.LeakyReLU(0.2))

        def forward(self, x):
            return self.main(x)


    class NetC(nn.Module):
        def __init__(self):
            super().__init__()
            self.joint = nn.Conv2d(12, 1, 4)

        def forward(self, out, y):
            return self.joint(torch.cat((out, y.repeat(1, 1, 4, 4)), 1))


    def train(loader, netG, netD, netC, {encoder}opt):
        for imgs, sent in loader:
            imgs = imgs.requires_grad_()
            sent = {sent}
            pred_real = netC(netD(imgs), sent)
            pred_fake = netC(netD(netG(torch.randn(imgs.size(0), 100), sent).detach()), sent)
            grads = torch.autograd.grad(outputs=pred_real, inputs=imgs,
                                        grad_outputs=torch.ones(pred_real.size()), create_graph=True)
            loss = torch.relu(1 - pred_real).mean() + torch.relu(1 + pred_fake).mean() + grads[0].pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
'''


def test_a_penalty_on_the_heads_score_goes_through_the_trunk(lint):
    # DF-GAN's matching-aware penalty differentiates `netC(netD(imgs), sent)` with respect
    # to the images: through the trunk, whose batch norm then couples the gradients.
    findings = lint(TRUNK_AND_HEAD_PENALTY.format(encoder="", sent="sent") + '''
        train(loader, nn.Linear(100, 3), NetD(), NetC(), opt)
    ''')
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN303", 28), ("SN401", 28)]


def test_a_penalty_on_the_heads_score_does_not_go_through_the_conditions_encoder(lint):
    # The caption's encoder feeds the head beside the trunk: no sample goes through it, and
    # a penalty on the head's score makes it no discriminator (its batch norm is no SN301).
    findings = lint(TRUNK_AND_HEAD_PENALTY.format(encoder="text_encoder, ", sent="text_encoder(sent)").replace(
        "nn.BatchNorm2d(8), ", "") + '''

        class TextEncoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Sequential(nn.Linear(16, 4), nn.BatchNorm1d(4))

            def forward(self, s):
                return self.fc(s).view(-1, 4, 1, 1)


        train(loader, nn.Linear(100, 3), NetD(), NetC(), TextEncoder(), opt)
    ''')
    assert findings == []


def test_a_trunk_whose_forward_does_not_run_the_head_is_not_judged_on_its_batch_norm(lint):
    # The trunk's forward runs `encode` alone: its calls do not reach the head's batch
    # norm, which the head's own calls are reported for.
    findings = lint(TWO_STEP.format(build="NetD()").replace(
        "nn.Sequential(nn.Conv2d(3, 8, 4, 4), nn.BatchNorm2d(8), nn.LeakyReLU(0.2))",
        "nn.Sequential(nn.Conv2d(3, 8, 4, 4), nn.LeakyReLU(0.2))"))
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN401", 32)]


def test_a_head_the_trunks_forward_also_runs_keeps_the_trunks_finding(lint):
    # Obj-GAN-like: the forward runs the head too, so the trunk's calls reach its batch norm.
    findings = lint(TWO_STEP.format(build="NetD()").replace(
        "nn.Sequential(nn.Conv2d(3, 8, 4, 4), nn.BatchNorm2d(8), nn.LeakyReLU(0.2))",
        "nn.Sequential(nn.Conv2d(3, 8, 4, 4), nn.LeakyReLU(0.2))").replace(
        "            return self.encode(x)",
        "            return self.cond_logits(self.encode(x), torch.zeros(x.size(0), 4, 1, 1))"))
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 30), ("SN401", 32)]


def test_candidates_reached_in_different_ways_each_say_how(lint):
    # StackGAN: `netD` is STAGE1_D from load_network_stageI() in one branch, STAGE2_D from
    # load_network_stageII() in the other; each candidate names its own builder.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Stage1D(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

            def forward(self, x):
                return self.main(x)


        class Stage2D(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

            def forward(self, x):
                return self.main(x)


        class Trainer:
            def load_stage1(self):
                return Stage1D()

            def load_stage2(self):
                return Stage2D()

            def train(self, loader, netG, opt, stage):
                if stage == 1:
                    netD = self.load_stage1()
                else:
                    netD = self.load_stage2()
                for x, _ in loader:
                    d_real = netD(x)
                    d_fake = netD(netG(torch.randn(x.size(0), 8)).detach())
                    loss = d_fake.mean() - d_real.mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()


        Trainer().train(loader, nn.Linear(8, 3), opt, args.stage)
    ''')
    assert sn401(findings).explanation.endswith(
        "Candidates: Stage1D (used as a discriminator by the training code; built by load_stage1() "
        "at example.py:33) or Stage2D (used as a discriminator by the training code; built by "
        "load_stage2() at example.py:35).")
