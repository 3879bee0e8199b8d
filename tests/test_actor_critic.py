"""A reinforcement learner's critic (an actor-critic's value network, SAC's Q-networks)
estimates values of states and actions: it never scores real against generated samples,
so its batch norm is no SN301 and its calls no SN401, in a project that also trains GANs."""

from __future__ import annotations

import pytest

from projects import lint_in as lint

MLP = '''
    import torch.nn as nn


    class {name}(nn.Module):
        def __init__(self, n_in=8, n_out=1):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_in, 64), nn.BatchNorm1d(64), nn.ReLU(),
                                     nn.Linear(64, n_out))

        def forward(self, x):
            return self.net(x)
'''

SAC = '''
    import torch
    import torch.nn as nn

    from networks import MLP


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)


    class SAC(nn.Module):
        def __init__(self):
            super().__init__()
            self.policy = Policy()
            self.q1 = MLP(8, 1)
            self.{value} = MLP(4, 1)

        def training_step(self, batch, batch_idx):
            states, actions, rewards = batch
            new_actions = self.policy(states)
            new_q = self.q1(torch.cat((states, new_actions), 1))
            q = self.q1(torch.cat((states, actions), 1))
            return (q - rewards).pow(2).mean() - new_q.mean() + self.{value}(states).mean()
'''

PPO = '''
    import torch.nn as nn

    from networks import MLP


    class PPO(nn.Module):
        def __init__(self):
            super().__init__()
            self.critic = MLP(4, 1)
            {actor} = MLP(4, 2)
            self.heads = nn.ModuleList([{actor}])
'''


def codes(findings):
    return [(f.code, f.path, f.line) for f in findings]


@pytest.mark.parametrize("name", ["ActorCriticMLP", "SoftActorCriticAgent", "ActorCritic"])
def test_a_class_named_as_an_actor_critic_is_no_discriminator(tmp_path, name):
    assert codes(lint(tmp_path, {"networks.py": MLP.format(name=name)})) == []


def test_a_critic_named_without_an_actor_is_still_a_discriminator(tmp_path):
    assert codes(lint(tmp_path, {"networks.py": MLP.format(name="Critic")})) == [
        ("SN301", "networks.py", 8)]


def test_a_q_network_whose_class_an_actor_uses_is_not_taken_for_a_discriminator_by_its_calls(tmp_path):
    files = {"networks.py": MLP.format(name="MLP"), "sac.py": SAC.format(value="actor_value")}
    assert codes(lint(tmp_path, files)) == []


def test_the_same_calls_of_a_class_no_actor_uses_make_it_a_discriminator(tmp_path):
    files = {"networks.py": MLP.format(name="MLP"), "sac.py": SAC.format(value="value")}
    assert [c for c, _, _ in codes(lint(tmp_path, files))] == ["SN301", "SN401"]


def test_a_network_bound_to_critic_and_actor_names_is_no_discriminator(tmp_path):
    files = {"networks.py": MLP.format(name="MLP"), "ppo.py": PPO.format(actor="actor_mlp")}
    assert codes(lint(tmp_path, files)) == []


def test_a_network_bound_to_critic_alone_is_a_discriminator(tmp_path):
    files = {"networks.py": MLP.format(name="MLP"), "ppo.py": PPO.format(actor="head_mlp")}
    assert codes(lint(tmp_path, files)) == [("SN301", "networks.py", 8)]


DDPG = '''
    import torch
    import torch.nn as nn


    class {actor}(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, state):
            return torch.tanh(self.fc(state))


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 64)
            self.bn1 = nn.BatchNorm1d(64)
            self.fc2 = nn.Linear(66, 1)

        def forward(self, state, action):
            return self.fc2(torch.cat([torch.relu(self.bn1(self.fc1(state))), action], 1))


    def learn(actor, critic, states, actions):
        q = critic(states, actions)
        return q.mean() - critic(states, actor(states)).mean()
'''


def test_a_critic_defined_beside_an_actor_class_is_no_discriminator(tmp_path):
    assert codes(lint(tmp_path, {"ddpg.py": DDPG.format(actor="Actor")})) == []


def test_a_critic_defined_beside_another_network_is_a_discriminator(tmp_path):
    assert codes(lint(tmp_path, {"ddpg.py": DDPG.format(actor="Policy")})) == [
        ("SN301", "ddpg.py", 19)]
