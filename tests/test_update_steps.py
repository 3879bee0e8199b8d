"""An optimizer step ends an update: SN401 pairs real and generated calls of one
discriminator step (or one relativistic generator step), never a call of the discriminator
step with one of the generator step after it. Consecutive steps of one optimizer (a step
on the real batch, then one on the generated batch) are one update."""

from __future__ import annotations

TRAINER = '''
    import torch
    import torch.nn as nn
    from torch.autograd import grad


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.main(x)


    class Trainer:
        def __init__(self, G, loader):
            self.G = G
            self.D = Discriminator()
            self.D_optimizer = torch.optim.Adam(self.D.parameters())
            self.G_optimizer = torch.optim.Adam(G.parameters())
            self.loader = loader

        def train(self):
            for x_, _ in self.loader:
                z_ = torch.randn(8, 100)
                self.D_optimizer.zero_grad()
    {d_step}
                self.D_optimizer.step()

                self.G_optimizer.zero_grad()
                G_ = self.G(z_)
                D_fake = self.D(G_)
                G_loss = -D_fake.mean()
                G_loss.backward()
                self.G_optimizer.step()
'''


def found(findings):
    return [(f.code, f.line) for f in findings]


def test_a_penalty_call_left_over_is_not_paired_with_the_generator_step(lint):
    # DRAGAN: real, fake, then the penalty on perturbed real data; the generator step's
    # D(G_) after the optimizer step is not the other half of the penalty call.
    findings = lint(TRAINER.format(d_step='''
                D_real = self.D(x_)
                G_ = self.G(z_)
                D_fake = self.D(G_)
                x_p = x_ + 0.5 * x_.std() * torch.rand(x_.size())
                interpolates = x_ + 0.5 * (x_p - x_)
                pred_hat = self.D(interpolates)
                gradients = grad(outputs=pred_hat, inputs=interpolates, create_graph=True)[0]
                (D_real.mean() - D_fake.mean() + gradients.norm()).backward()'''))
    assert found(findings) == [("SN301", 10), ("SN401", 29), ("SN303", 34)]
    assert "separate call at line 31" in findings[1].explanation


def test_a_discriminator_step_with_one_call_is_not_paired_with_the_generator_step(lint):
    findings = lint(TRAINER.format(d_step='''
                D_real = self.D(x_)
                D_real.mean().backward()'''))
    assert found(findings) == [("SN301", 10)]


def test_backward_between_the_calls_does_not_end_the_update(lint):
    # pytorch/examples dcgan: errD_real.backward() between the two calls, one step after.
    findings = lint(TRAINER.format(d_step='''
                D_real = self.D(x_)
                D_real.mean().backward()
                G_ = self.G(z_)
                D_fake = self.D(G_.detach())
                D_fake.mean().backward()'''))
    assert found(findings) == [("SN301", 10), ("SN401", 29)]
    assert "separate call at line 32" in findings[1].explanation


SPLIT_STEP = '''
                D_real = self.D(x_)
                D_real.mean().backward()
                {step}
                self.D_optimizer.zero_grad()
                G_ = self.G(z_)
                D_fake = self.D(G_.detach())
                D_fake.mean().backward()'''


def test_a_step_on_the_real_batch_then_one_on_the_generated_batch_is_one_update(lint):
    # yunjey's mnist-svhn-transfer: "train with real images", step; "train with fake
    # images", step: each batch normalized with its own statistics, as before one step.
    findings = lint(TRAINER.format(d_step=SPLIT_STEP.format(step="self.D_optimizer.step()")))
    assert found(findings) == [("SN301", 10), ("SN401", 29)]
    assert "separate call at line 34" in findings[1].explanation


def test_a_mixed_precision_step_steps_the_optimizer_it_is_given(lint):
    findings = lint(TRAINER.format(d_step=SPLIT_STEP.format(step="scaler.step(self.D_optimizer)")))
    assert found(findings) == [("SN301", 10), ("SN401", 29)]


def test_the_steps_of_two_optimizers_stay_apart(lint):
    findings = lint(TRAINER.format(d_step=SPLIT_STEP.format(step="self.G_optimizer.step()")))
    assert found(findings) == [("SN301", 10)]


def test_steps_inside_a_helper_are_not_taken_for_one_optimizer(lint):
    # `update(opt, loss)` steps whichever optimizer it is given: the discriminator's real
    # batch, then the generator's step on the generated one, are not one update.
    trainer = TRAINER[:TRAINER.index("        def train(self):")] + '''
        def update(self, opt, loss):
            opt.zero_grad()
            loss.backward()
            opt.step()

        def train(self):
            for x_, _ in self.loader:
                self.update(self.D_optimizer, self.D(x_).mean())
                fake = self.G(torch.randn(8, 100))
                self.update(self.G_optimizer, -self.D(fake).mean())
'''
    assert found(lint(trainer)) == [("SN301", 10)]


def test_numbered_discriminators_and_generators_of_two_domains(lint):
    # yunjey's mnist-svhn-transfer: D1, D2 and G12, G21 (a generator per direction), the
    # discriminators trained on real images in one step and on generated ones in the next;
    # the generators, called on real and generated images by the cycle, are none.
    findings = lint('''
        import torch
        import torch.nn as nn


        def conv(c_in, c_out, bn=True):
            layers = [nn.Conv2d(c_in, c_out, 4, 2, 1)]
            if bn:
                layers.append(nn.BatchNorm2d(c_out))
            return nn.Sequential(*layers)


        class G12(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = conv(1, 3)

            def forward(self, x):
                return self.conv(x)


        class D1(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = conv(1, 64, bn=False)
                self.conv2 = conv(64, 1)

            def forward(self, x):
                return self.conv2(self.conv1(x))


        class Solver:
            def __init__(self, loader):
                self.loader = loader
                self.g12 = G12()
                self.g21 = G12()
                self.d1 = D1()
                self.d_optimizer = torch.optim.Adam(self.d1.parameters())
                self.g_optimizer = torch.optim.Adam(self.g12.parameters())

            def train(self):
                for mnist, svhn in self.loader:
                    out = self.d1(mnist)
                    torch.mean((out - 1) ** 2).backward()
                    self.d_optimizer.step()

                    fake_mnist = self.g21(svhn)
                    out = self.d1(fake_mnist)
                    torch.mean(out ** 2).backward()
                    self.d_optimizer.step()

                    fake_mnist = self.g21(svhn)
                    reconst_svhn = self.g12(fake_mnist)
                    (torch.mean((self.d1(fake_mnist) - 1) ** 2) + torch.mean((svhn - reconst_svhn) ** 2)).backward()
                    self.g_optimizer.step()
    ''')
    # The batch norm is built by `conv()`, which G12 runs too: D1's own `conv(64, 1)`.
    assert found(findings) == [("SN301", 26), ("SN401", 43)]
    assert "D1 (used as a discriminator by the training code" in findings[1].explanation


# Kind-PyTorch-Tutorial: the generated batch is scored once, in the generator's steps, and
# its score is reused by the discriminator's loss beside the real batch's, after them.
REUSED_SCORE = '''
    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.bn(self.conv(x)).mean((1, 2, 3))


    generator = nn.Linear(16, 784)
    discriminator = Discriminator()
    loss_func = nn.MSELoss()
    gen_optim = torch.optim.Adam(generator.parameters())
    dis_optim = torch.optim.Adam(discriminator.parameters())
    for image, label in torch.utils.data.DataLoader([]):
        for k in range(5):
            gen_optim.zero_grad()
            gen_fake = generator(torch.randn(16, 16)).view(-1, 1, 28, 28)
            dis_fake = discriminator(gen_fake)
            gen_loss = loss_func(dis_fake, torch.ones(16))
            gen_loss.backward(retain_graph=True)
            gen_optim.step()
        dis_optim.zero_grad()
        dis_real = discriminator(image)
        dis_loss = loss_func(dis_fake, torch.zeros(16)) + loss_func(dis_real, torch.ones(16))
        dis_loss.backward()
        dis_optim.step()
'''


def test_a_generated_score_kept_from_the_generator_step_pairs_with_the_real_one_its_loss_adds(lint):
    findings = lint(REUSED_SCORE)
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 25)]
    assert "in a separate call at line 30" in findings[-1].evidence
    assert "used as a discriminator by the training code" in findings[-1].explanation


# A discriminator with batch norm, for the loss-driven pairings below.
BN_DISCRIMINATOR = '''
    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.bn(self.conv(x))
'''


# pix2pixHD: the generator's loss reuses the real batch's features, scored in the
# discriminator's step, whose real and generated calls are already one pair.
FEATURES_REUSED = BN_DISCRIMINATOR + '''

    netG = nn.Conv2d(3, 3, 3)
    netD = Discriminator()
    optG = torch.optim.Adam(netG.parameters())
    optD = torch.optim.Adam(netD.parameters())
    for real, _ in torch.utils.data.DataLoader([]):
        fake = netG(real)
        pred_real = netD(real)
        pred_fake = netD(fake.detach())
        loss_d = pred_fake.mean() - pred_real.mean()
        optD.zero_grad()
        loss_d.backward()
        optD.step()
        pred_fake_g = netD(fake)
        loss_g = -pred_fake_g.mean() + (pred_fake_g - pred_real.detach()).abs().mean()
        optG.zero_grad()
        loss_g.backward()
        optG.step()
'''


def test_a_loss_reusing_scores_of_a_pair_already_found_adds_no_finding(lint):
    findings = lint(FEATURES_REUSED)
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 22)]


# fsgan: the discriminator's loss scores the detached generated batch, then the real one;
# the generator's loss then scores the generated batch again, before either step.
D_STEP_THEN_G_SCORE = BN_DISCRIMINATOR + '''

    G = nn.Conv2d(3, 3, 3)
    D = Discriminator()
    opt_G = torch.optim.Adam(G.parameters())
    opt_D = torch.optim.Adam(D.parameters())
    for img, _ in torch.utils.data.DataLoader([]):
        out = G(img)
        pred_fake_pool = D(out.detach())
        pred_real = D(img)
        loss_D = pred_fake_pool.mean() - pred_real.mean()
        pred_fake = D(out)
        loss_G = -pred_fake.mean()
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
        opt_D.zero_grad()
        loss_D.backward()
        opt_D.step()
'''


def test_of_two_generated_scores_beside_the_real_one_the_detached_one_pairs_with_it(lint):
    findings = [f for f in lint(D_STEP_THEN_G_SCORE) if f.code == "SN401"]
    assert [(f.code, f.line) for f in findings] == [("SN401", 22)]
    assert "in a separate call at line 23" in findings[0].explanation


# pix2pix (instagan): a model's methods run from its training step and on their own; the
# generator's loss is one call, of one run, however many runs made calls at that site.
PIX2PIX_MODEL = '''
    import torch
    import torch.nn as nn


    class NLayerDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(nn.Conv2d(6, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

        def forward(self, x):
            return self.model(x)


    class GANLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("real_label", torch.tensor(1.0))
            self.register_buffer("fake_label", torch.tensor(0.0))
            self.loss = nn.MSELoss()

        def __call__(self, input, target_is_real):
            target = self.real_label if target_is_real else self.fake_label
            return self.loss(input, target.expand_as(input))


    class Pix2PixModel:
        def initialize(self):
            self.netG = nn.Conv2d(3, 3, 3)
            self.netD = NLayerDiscriminator()
            self.criterionGAN = GANLoss()
            self.optimizer_G = torch.optim.Adam(self.netG.parameters())
            self.optimizer_D = torch.optim.Adam(self.netD.parameters())

        def set_input(self, input):
            self.real_A = input["A"]
            self.real_B = input["B"]

        def backward_D(self):
            pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1).detach())
            pred_real = self.netD(torch.cat((self.real_A, self.real_B), 1))
            self.loss_D = (self.criterionGAN(pred_fake, False) + self.criterionGAN(pred_real, True)) * 0.5
            self.loss_D.backward()

        def backward_G(self):
            pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1))
            self.loss_G = self.criterionGAN(pred_fake, True)
            self.loss_G.backward()

        def forward(self):
            self.fake_B = self.netG(self.real_A)

        def optimize_parameters(self):
            self.forward()
            self.optimizer_D.zero_grad()
            self.backward_D()
            self.optimizer_D.step()
            self.optimizer_G.zero_grad()
            self.backward_G()
            self.optimizer_G.step()
'''


def test_a_loss_differentiates_the_calls_of_its_own_run_only(lint):
    findings = [f for f in lint(PIX2PIX_MODEL) if f.code == "SN401"]
    assert [(f.code, f.line) for f in findings] == [("SN401", 40)]
